"""The twin of layer_scale_inplace_after_sigmoid.py, written out of place (`LayerScale(..., inplace=False)`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
import torch
import torch.nn as nn
from timm.layers import LayerScale


class ScaledGate(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.ls = LayerScale(dim, init_values=0.1, inplace=False)

    def forward(self, x):
        g = torch.sigmoid(self.gate(x))
        g = self.ls(g)
        return x * g


torch.manual_seed(0)
model = ScaledGate()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8)
loss = model(x).sum()
opt.zero_grad()
loss.backward()
opt.step()
