"""An attention gate built with timm's `create_act_layer("sigmoid")` is masked in place with `mul_`; sigmoid's backward needs its output."""
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
        g.mul_(mask)  # expect: GG001
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
