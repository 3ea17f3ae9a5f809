"""The gated MLP again, scaling the value half out of place: no output of the split is changed."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * hidden)
        self.out = nn.Linear(hidden, dim)
        self.scale = hidden ** -0.5

    def forward(self, x):
        value, gate = torch.split(tensor=self.proj(x), split_size_or_sections=self.out.in_features, dim=-1)
        value = value * self.scale
        return self.out(value * F.silu(gate))


torch.manual_seed(0)
model = GatedMLP(8, 16)
x = torch.randn(4, 8)
loss = model(x).pow(2).mean()
loss.backward()
print("ok", float(loss))
