"""The label-smoothed loss masks padded rows with torch.where instead of a masked write: log_softmax's saved output is never touched."""
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class LossConfig:
    smoothing: float = 0.1
    pad_id: int = 0


class SmoothedNLL(nn.Module):
    def __init__(self, cfg: LossConfig):
        super().__init__()
        self.cfg = cfg

    def forward(self, logits, target):
        logp = logits.log_softmax(dim=-1)
        pad = target == self.cfg.pad_id
        logp = torch.where(pad.unsqueeze(-1), torch.zeros_like(logp), logp)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -logp.mean(dim=-1)
        loss = (1 - self.cfg.smoothing) * nll + self.cfg.smoothing * smooth
        loss[pad] = 0.0
        return loss.sum() / (~pad).sum()


class TinyDecoder(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.proj = nn.Linear(dim, vocab)

    def forward(self, ids):
        h, _ = self.rnn(self.embed(ids))
        return self.proj(h)


torch.manual_seed(0)
model = TinyDecoder()
criterion = SmoothedNLL(LossConfig())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
src = torch.randint(1, 20, (3, 8))
tgt = torch.randint(1, 20, (3, 8))
tgt[:, 6:] = 0
loss = criterion(model(src), tgt)
opt.zero_grad()
loss.backward()
opt.step()
