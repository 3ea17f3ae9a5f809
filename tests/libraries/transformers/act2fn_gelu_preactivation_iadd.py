"""A gated skip adds the GELU of a projection back onto the projection in place; `ACT2FN["gelu"]` (GELUActivation) runs F.gelu, which saved its input."""
import torch
import torch.nn as nn
from transformers.activations import ACT2FN


class GatedSkip(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.act = ACT2FN["gelu"]

    def forward(self, x):
        hidden = self.dense(x)
        activated = self.act(hidden)
        hidden += activated  # expect: GG001
        return hidden


torch.manual_seed(0)
layer = GatedSkip()
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
x = torch.randn(3, 16)
loss = layer(x).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
