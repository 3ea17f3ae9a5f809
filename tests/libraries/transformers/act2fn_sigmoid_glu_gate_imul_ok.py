"""The twin of act2fn_sigmoid_glu_gate_imul.py, written out of place (`gate = gate * self.up_proj(x)`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
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
        gate = gate * self.up_proj(x)
        return self.down_proj(gate)


torch.manual_seed(0)
glu = GLU()
opt = torch.optim.AdamW(glu.parameters(), lr=1e-3)
x = torch.randn(2, 5, 16)
loss = glu(x).square().mean()
opt.zero_grad()
loss.backward()
opt.step()
