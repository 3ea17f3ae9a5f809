"""A gated block multiplies several learned gates together with `functools.reduce`.

`operator.imul` is `a *= b`: the first gate, the output that `torch.sigmoid` saved for its
backward, is multiplied in place by the others.
"""
import functools
import operator

import torch
import torch.nn as nn


class GatedBlock(nn.Module):
    def __init__(self, dim: int, n_gates: int = 3) -> None:
        super().__init__()
        self.gates = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n_gates))
        self.value = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gates = [torch.sigmoid(layer(x)) for layer in self.gates]
        gate = functools.reduce(operator.imul, gates)  # expect: GG001
        return gate * self.value(x)


torch.manual_seed(0)
block = GatedBlock(8)
out = block(torch.randn(4, 8))
out.sum().backward()
