"""A model library registers its blocks by name and builds them from a JSON config (the environment's, else a default); `GatedMLP`
initialises its gate bias uniformly in place when `uniform_init` is set. No code calls the class
directly, so its default (False) is only one possible value: this config passes True, and the
in-place op on an `nn.Parameter` raises while the model is built."""
import json
import os

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
            self.gate_bias.uniform_(-0.5, 0.5)  # expect: GG002

    def forward(self, x):
        value, gate = self.up(x).chunk(2, dim=-1)
        return self.down(value * torch.sigmoid(gate + self.gate_bias))


def build(config):
    config = dict(config)
    return BLOCKS[config.pop("name")](**config)


config = json.loads(os.environ.get("BLOCK_CONFIG", '{"name": "GatedMLP", "dim": 16, "hidden": 32, "uniform_init": true}'))
block = build(config)
optimizer = torch.optim.AdamW(block.parameters(), lr=1e-3)
loss = block(torch.randn(4, 16)).pow(2).mean()
loss.backward()
optimizer.step()
