"""A small GPT-style projection adds transformers' Conv1D output back onto its input in place; Conv1D's `torch.addmm` saved a view of that input."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers.pytorch_utils import Conv1D


class Projection(nn.Module):
    def __init__(self, vocab=30, dim=16):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.c_proj = Conv1D(dim, dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        h = self.wte(ids)
        h += self.c_proj(h)  # expect: GG001
        return self.lm_head(h)


torch.manual_seed(0)
model = Projection()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
ids = torch.randint(0, 30, (2, 8))
logits = model(ids[:, :-1])
loss = F.cross_entropy(logits.reshape(-1, 30), ids[:, 1:].reshape(-1))
opt.zero_grad()
loss.backward()
opt.step()
