"""The twin of create_act_layer_sigmoid_gate_mul_.py, written out of place (`g = g.mul(mask)`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
import torch
import torch.nn as nn
from timm.layers import create_act_layer


class MaskedGate(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.act = create_act_layer("sigmoid")

    def forward(self, x, mask):
        g = self.act(self.proj(x))
        g = g.mul(mask)
        return x * g


torch.manual_seed(0)
gate = MaskedGate()
opt = torch.optim.Adam(gate.parameters(), lr=1e-3)
x = torch.randn(3, 8)
mask = (torch.rand(3, 8) > 0.2).float()
loss = gate(x, mask).pow(2).sum()
opt.zero_grad()
loss.backward()
opt.step()
