"""A gated block whose forward takes a mask beside its input, scaling the gate in place.

`torch.sigmoid` saves its output for backward; `gate.mul_(mask)` changes that output, so
backward raises "one of the variables needed for gradient computation has been modified by an
inplace operation". Fix: `gate = gate.mul(mask)`.

Nothing here runs the block, so `gradguard verify` needs `--target MaskedBlock`, and the mask
cannot be inferred from the first layer: `--input 2,16,64 --input 2,16,1:bool`.
"""

import torch
from torch import nn


class MaskedBlock(nn.Module):
    def __init__(self, dim: int = 64) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        gate = torch.sigmoid(self.proj(x))
        gate.mul_(mask)
        return x * gate
