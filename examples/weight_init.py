"""A custom layer that initialises its parameters in place, outside `torch.no_grad()`.

`self.weight` is an `nn.Parameter`: a leaf tensor that requires grad. `uniform_()` on it raises
"a leaf Variable that requires grad is being used in an in-place operation" as soon as the
layer is built. Fix: `nn.init.uniform_(self.weight, -bound, bound)`, or wrap the statements
in `with torch.no_grad():`.
"""

import math

import torch
from torch import nn


class ScaledLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        self.scale = 1.0 / math.sqrt(in_features)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.weight.shape[1])
        self.weight.uniform_(-bound, bound)
        self.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, self.weight, self.bias) * self.scale


layer = ScaledLinear(32, 8)
inputs = torch.randn(16, 32)
targets = torch.randn(16, 8)
loss = nn.functional.mse_loss(layer(inputs), targets)
loss.backward()
