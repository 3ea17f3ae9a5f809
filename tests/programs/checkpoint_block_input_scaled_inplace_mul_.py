"""Gradient checkpointing: `checkpoint(blk, h)` keeps none of the block's saves but saves its
input `h` to run the block again in backward; scaling `h` in place before backward breaks that."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


blk = Block()
head = nn.Linear(4, 1)
h = torch.randn(2, 4, requires_grad=True) * 1
y = checkpoint(blk, h, use_reentrant=False)
h.mul_(2)  # expect: GG001
head(y).sum().backward()
