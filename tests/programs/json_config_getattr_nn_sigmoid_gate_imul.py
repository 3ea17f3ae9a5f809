"""A gated MLP reads its gate activation name from a JSON config and builds it with getattr(nn, name); a helper that returns early for the ungated case scales the Sigmoid gate in place."""
import json

import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = json.loads('{"hidden": 32, "gate_act": "Sigmoid", "gate_scale": 2.0, "use_gate": true}')


def apply_gate(h, gate, scale, enabled):
    if not enabled:
        return h
    gate *= scale  # expect: GG001
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
