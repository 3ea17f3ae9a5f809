"""Per-layer learnable scales kept in an `nn.ParameterList`, clamped in place at the start of
each layer's step in `forward`: each scale is a leaf that requires grad, so the first clamp
raises."""
import torch
import torch.nn as nn


class ScaledStack(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.scales = nn.ParameterList(nn.Parameter(torch.full((dim,), 0.1)) for _ in range(depth))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            self.scales[i].clamp_(1e-3, 1.0)  # expect: GG002
            x = x + self.scales[i] * torch.tanh(layer(x))
        return x


model = ScaledStack(8, depth=3)
model(torch.randn(2, 8)).pow(2).mean().backward()
