"""A numerically sensitive block runs with autocast switched off inside a mixed-precision region:
there the linear layer runs in fp32, so `.float()` of the gate is the gate itself."""
import torch
import torch.nn as nn

torch.manual_seed(0)
proj = nn.Linear(8, 8)
gate_layer = nn.Linear(8, 8)
x = torch.randn(4, 8)

with torch.autocast("cpu", dtype=torch.bfloat16):
    h = proj(x)
    with torch.autocast("cpu", enabled=False):
        gate = torch.sigmoid(gate_layer(h.float()))
        scaled = gate.float()
        scaled.mul_(2.0)  # expect: GG001
    out = h * scaled
out.sum().backward()
