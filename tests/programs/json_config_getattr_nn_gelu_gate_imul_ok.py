"""Same gated MLP, but the JSON config names GELU for the gate: GELU saves its input, not its output, so scaling the gate in place is harmless."""
import json

import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = json.loads('{"hidden": 32, "gate_act": "GELU", "gate_scale": 2.0, "use_gate": true}')


def apply_gate(h, gate, scale, enabled):
    if not enabled:
        return h
    gate *= scale
    return h * gate


class GatedMLP(nn.Module):
    def __init__(self, dim, cfg):
        super().__init__()
        self.up = nn.Linear(dim, cfg["hidden"])
        self.gate = nn.Linear(dim, cfg["hidden"])
        self.act = getattr(nn, cfg["gate_act"])()
        self.down = nn.Linear(cfg["hidden"], dim)
        self.cfg = cfg

    def forward(self, x):
        h = F.silu(self.up(x))
        g = self.act(self.gate(x))
        h = apply_gate(h, g, self.cfg["gate_scale"], self.cfg["use_gate"])
        return self.down(h)


torch.manual_seed(0)
model = GatedMLP(8, CONFIG)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 8), torch.randn(16, 8)
for step in range(2):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
