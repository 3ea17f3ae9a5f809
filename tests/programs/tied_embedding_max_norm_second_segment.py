"""A language model ties its output projection to an Embedding(max_norm=...); scoring a second segment before backward renormalizes the embedding weight in place, which the tied F.linear of the first segment saved."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TiedLM(nn.Module):
    def __init__(self, vocab=30, dim=16, max_norm=1.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, max_norm=max_norm)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.norm = nn.LayerNorm(dim)

    def forward(self, ids):
        x = self.embed(ids)  # expect: GG001
        h, _ = self.rnn(x)
        return F.linear(self.norm(h), self.embed.weight)


def segment_loss(model, ids):
    logits = model(ids[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


torch.manual_seed(0)
model = TiedLM()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
document = torch.randint(0, 30, (2, 21))
segments = document.split(11, dim=1)
losses = [segment_loss(model, seg) for seg in segments]
loss = torch.stack(losses).mean()
opt.zero_grad()
loss.backward()
opt.step()
