"""A self-distillation step takes the last-token target from the online output under torch.no_grad() (a view, not a copy) and normalizes it in place once grad mode is back on."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SequenceEncoder(nn.Module):
    def __init__(self, d_in=6, dim=16):
        super().__init__()
        self.inp = nn.Linear(d_in, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.pred = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))

    def forward(self, x):
        h, _ = self.rnn(F.silu(self.inp(x)))
        return h


def distill_loss(model, seq, temperature=0.5):
    h = model(seq)
    with torch.no_grad():
        target = h[:, -1]
    target.div_(target.norm(dim=-1, keepdim=True) * temperature)  # expect: GG003
    online = F.normalize(model.pred(h[:, :-1].mean(dim=1)), dim=-1)
    return (2 - 2 * (online * target).sum(-1)).mean()


torch.manual_seed(0)
model = SequenceEncoder()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
seq = torch.randn(4, 7, 6)
loss = distill_loss(model, seq)
opt.zero_grad()
loss.backward()
opt.step()
