"""A small classifier whose head picks how to post-process by `match` on its activation module's class
and on its config dict: the in-place scaling only runs for activations that do not save their output."""
import torch
import torch.nn as nn

CONFIG = {"act": "gelu", "scale": 0.5}


class Head(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.act = nn.Tanh()

    def forward(self, x):
        y = self.act(self.proj(x))
        match self.act:
            case nn.GELU() | nn.SiLU():
                y.mul_(CONFIG["scale"])
            case _:
                y = y * CONFIG["scale"]
        match CONFIG:
            case {"act": "relu", "scale": scale}:
                y.mul_(scale)
            case {"act": _}:
                pass
        return y


torch.manual_seed(0)
model = Head()
out = model(torch.randn(4, 8))
out.sum().backward()
