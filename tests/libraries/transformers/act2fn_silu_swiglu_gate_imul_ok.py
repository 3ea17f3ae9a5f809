"""A SwiGLU feed-forward multiplies the gate from `ACT2FN["silu"]` by the up projection in place: SiLU's backward needs its input, not its output, so training runs cleanly."""
import torch
import torch.nn as nn
from transformers.activations import ACT2FN


class SwiGLU(nn.Module):
    def __init__(self, dim=16, hidden=24):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden)
        self.up_proj = nn.Linear(dim, hidden)
        self.down_proj = nn.Linear(hidden, dim)
        self.act = ACT2FN["silu"]

    def forward(self, x):
        gate = self.act(self.gate_proj(x))
        gate *= self.up_proj(x)
        return self.down_proj(gate)


torch.manual_seed(0)
ff = SwiGLU()
opt = torch.optim.AdamW(ff.parameters(), lr=1e-3)
x = torch.randn(2, 5, 16)
loss = ff(x).square().mean()
opt.zero_grad()
loss.backward()
opt.step()
