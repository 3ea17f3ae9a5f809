import torch.nn as nn


class Head(nn.Module):
    """Imports its activation where it needs it (as libraries do to keep their import time low)."""

    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        from .activations import squashed

        return squashed(self.proj(x))
