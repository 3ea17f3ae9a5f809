"""A multi-task model returns its heads' outputs in a dict beside its exp features; a loss helper
builds a dict of per-task losses by comprehension, summed with `sum(...values())`; the trainer
normalises the exp features in place first, and exp saved its output for backward."""
import torch
import torch.nn as nn


class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 16)
        self.heads = nn.ModuleDict({"cls": nn.Linear(16, 3), "reg": nn.Linear(16, 1)})

    def forward(self, x):
        z = torch.exp(self.body(x))
        return {name: head(z) for name, head in self.heads.items()}, z


def losses(outputs, targets):
    return {k: (outputs[k] - targets[k]).abs().mean() for k in outputs}


model = MultiHead()
x = torch.randn(4, 8)
targets = {"cls": torch.randn(4, 3), "reg": torch.randn(4, 1)}
outputs, z = model(x)
z.div_(z.sum())  # expect: GG001
total = sum(losses(outputs, targets).values())
total.backward()
