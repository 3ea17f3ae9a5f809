"""A gated layer that clamps its sigmoid gate through `.data`.

`sigmoid` saves its output for backward. `gate.data.clamp_()` writes to that output through a
tensor with its own version counter, so autograd never notices: `loss.backward()` runs without
an error, but uses the clamped values in sigmoid's backward formula and returns wrong gradients.
Fix: `gate = gate.clamp(min=0.05)`, or a smooth floor: `0.05 + 0.95 * torch.sigmoid(...)`.
"""

import torch
from torch import nn


class GatedUnit(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate = torch.sigmoid(self.gate(x))
        gate.data.clamp_(min=0.05)  # keep every channel a little open
        return gate * self.value(x)


layer = GatedUnit(32)
features = torch.randn(16, 32)
loss = layer(features).sum()
loss.backward()
print("gate weight gradient norm:", layer.gate.weight.grad.norm().item())
