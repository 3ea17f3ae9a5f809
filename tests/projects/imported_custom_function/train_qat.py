"""A quantised linear layer rounds its pre-activation with a straight-through estimator imported from
the project's `quant` package; the estimator saves its input for backward, and the layer then adds
the bias onto that input in place: backward finds the saved input changed."""
import torch
import torch.nn as nn
from quant import ClampedRoundSTE, QuantileScale


class QuantLinear(nn.Module):
    def __init__(self, d_in, d_out, levels=7):
        super().__init__()
        self.linear = nn.Linear(d_in, d_out, bias=False)
        self.bias = nn.Parameter(torch.zeros(d_out))
        self.levels = levels
        self.quantize = ClampedRoundSTE.apply

    def forward(self, x):
        pre = QuantileScale.apply(self.linear(x), 0.1)
        q = self.quantize(pre, self.levels)
        pre += self.bias  # expect: GG001
        return q + pre


torch.manual_seed(0)
layer = QuantLinear(8, 4)
loss = layer(torch.randn(5, 8)).pow(2).mean()
loss.backward()
