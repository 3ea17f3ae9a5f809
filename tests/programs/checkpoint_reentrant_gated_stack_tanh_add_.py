"""Activation checkpointing over a stack of gated MLP blocks (`use_reentrant=True`).

The reentrant checkpoint runs each block again in backward, with grad on, and backpropagates
through that run: the gate's in-place `add_` changes the output `tanh` saved in it.
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class GatedMLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up = nn.Linear(d, 2 * d)
        self.down = nn.Linear(d, d)

    def forward(self, x):
        a, b = self.up(x).split(x.shape[-1], dim=-1)
        gate = torch.tanh(a)
        gate.add_(1.0)  # expect: GG001
        return self.down(gate * b)


class Stack(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.blocks = nn.ModuleList(GatedMLP(d) for _ in range(n))

    def forward(self, x):
        for blk in self.blocks:
            x = x + checkpoint(blk, x, use_reentrant=True)
        return x


torch.manual_seed(0)
m = Stack(16, 3).train()
inp = torch.randn(4, 16, requires_grad=True)
m(inp).sum().backward()
