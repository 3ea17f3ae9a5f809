"""Activation capping for quantisation-aware fine-tuning registers `partial(cap_activation, limit=...)` as a forward hook on every Tanh; the hook clamps the output in place, the output tanh saved for backward."""
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


def cap_activation(module, inputs, output, limit=1.0):
    output.clamp_(-limit, limit)  # expect: GG001


class TanhMLP(nn.Module):
    def __init__(self, dim=8, hidden=32, n_cls=3):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.head = nn.Linear(hidden, n_cls)

    def forward(self, x):
        return self.head(self.layers(x))


def add_activation_caps(model, limit):
    for name, module in model.named_modules():
        if isinstance(module, nn.Tanh):
            module.register_forward_hook(partial(cap_activation, limit=limit))


torch.manual_seed(0)
model = TanhMLP()
add_activation_caps(model, limit=0.75)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
loss = F.cross_entropy(model(x), y)
opt.zero_grad()
loss.backward()
opt.step()
