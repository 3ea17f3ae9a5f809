"""The soft-capped head applies div_ and tanh_ in place and then scales out of place; the loop then bans the pad token by writing into that scaled copy: tanh_'s saved result is never touched."""
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD_ID = 0


class SoftCappedHead(nn.Module):
    def __init__(self, dim, vocab, cap=30.0):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, vocab, bias=False)
        self.cap = cap

    def forward(self, h):
        logits = self.proj(self.norm(h))
        logits.div_(self.cap)
        logits.tanh_()
        return logits * self.cap


class TinyLM(nn.Module):
    def __init__(self, vocab=40, dim=16, n_layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mixers = nn.ModuleList(nn.GRU(dim, dim, batch_first=True) for _ in range(n_layers))
        self.head = SoftCappedHead(dim, vocab)

    def forward(self, ids):
        h = self.embed(ids)
        for rnn in self.mixers:
            out, _ = rnn(h)
            h = h + out
        return self.head(h)


torch.manual_seed(0)
lm = TinyLM()
opt = torch.optim.AdamW(lm.parameters(), lr=1e-3)
for step in range(2):
    ids = torch.randint(1, 40, (2, 10))
    logits = lm(ids[:, :-1])
    logits[..., PAD_ID] = -1e4
    loss = F.cross_entropy(logits.reshape(-1, 40), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
