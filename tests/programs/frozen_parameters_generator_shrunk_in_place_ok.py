"""A generator yields only the frozen parameters (`if not p.requires_grad`), and a helper shrinks
what it is given in place: none of them requires grad, so torch allows it outside `no_grad`."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(5, 4), nn.ReLU(), nn.Linear(4, 1))
model[0].requires_grad_(False)


def frozen(module):
    for p in module.parameters():
        if not p.requires_grad:
            yield p


def shrink(params, factor=0.5):
    for p in params:
        p.mul_(factor)


shrink(frozen(model))
model(torch.randn(3, 5)).sum().backward()
