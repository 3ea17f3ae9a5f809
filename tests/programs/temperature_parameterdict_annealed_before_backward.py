"""Learnable per-task temperatures in an `nn.ParameterDict`; the trainer anneals one in place
under `torch.no_grad()` after the forward pass but before `backward()`. The division saved the
temperature, so the backward pass raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiTaskHead(nn.Module):
    def __init__(self, dim, tasks):
        super().__init__()
        self.proj = nn.Linear(dim, 4)
        self.temperature = nn.ParameterDict({t: nn.Parameter(torch.ones(1)) for t in tasks})

    def forward(self, x, task):
        return self.proj(x) / self.temperature[task]


head = MultiTaskHead(8, ["cls", "seg"])
x, y = torch.randn(6, 8), torch.randint(0, 4, (6,))
logits = head(x, "cls")
with torch.no_grad():
    head.temperature["cls"].mul_(0.9)  # expect: GG001
F.cross_entropy(logits, y).backward()
