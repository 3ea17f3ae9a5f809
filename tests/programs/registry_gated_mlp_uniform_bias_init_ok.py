"""A model library registers its blocks by name and builds them from a JSON config; `GatedMLP`
initialises its gate bias with `nn.init.uniform_` (which runs under no_grad) when `uniform_init`
is set. This config passes True, the init leaves autograd alone, and training runs."""
import json

import torch
import torch.nn as nn

BLOCKS = {}


def register(cls):
    BLOCKS[cls.__name__] = cls
    return cls


@register
class GatedMLP(nn.Module):
    def __init__(self, dim, hidden, uniform_init=False):
        super().__init__()
        self.up = nn.Linear(dim, 2 * hidden)
        self.down = nn.Linear(hidden, dim)
        self.gate_bias = nn.Parameter(torch.zeros(hidden))
        if uniform_init:
            nn.init.uniform_(self.gate_bias, -0.5, 0.5)

    def forward(self, x):
        value, gate = self.up(x).chunk(2, dim=-1)
        return self.down(value * torch.sigmoid(gate + self.gate_bias))


def build(config):
    config = dict(config)
    return BLOCKS[config.pop("name")](**config)


config = json.loads('{"name": "GatedMLP", "dim": 16, "hidden": 32, "uniform_init": true}')
block = build(config)
optimizer = torch.optim.AdamW(block.parameters(), lr=1e-3)
loss = block(torch.randn(4, 16)).pow(2).mean()
loss.backward()
optimizer.step()
