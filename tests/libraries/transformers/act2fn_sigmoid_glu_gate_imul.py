"""A GLU-style gate from `ACT2FN["sigmoid"]` (nn.Sigmoid) is multiplied by the value branch in place; sigmoid's backward needs its output."""
import torch
import torch.nn as nn
from transformers.activations import ACT2FN


class GLU(nn.Module):
    def __init__(self, dim=16, hidden=24):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden)
        self.up_proj = nn.Linear(dim, hidden)
        self.down_proj = nn.Linear(hidden, dim)
        self.act = ACT2FN["sigmoid"]

    def forward(self, x):
        gate = self.act(self.gate_proj(x))
        gate *= self.up_proj(x)  # expect: GG001
        return self.down_proj(gate)


torch.manual_seed(0)
glu = GLU()
opt = torch.optim.AdamW(glu.parameters(), lr=1e-3)
x = torch.randn(2, 5, 16)
loss = glu(x).square().mean()
opt.zero_grad()
loss.backward()
opt.step()
