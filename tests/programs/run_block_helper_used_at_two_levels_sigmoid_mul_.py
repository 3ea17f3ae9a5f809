"""A helper that runs a block (with optional checkpointing) used at two nesting levels: the inner block's in-place change to its argument (a sigmoid's output, saved) is only visible through it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def run_block(block, x, use_ckpt=False):
    if use_ckpt:
        return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
    return block(x)


class Scale(nn.Module):
    def forward(self, h):
        h.mul_(0.5)  # expect: GG001
        return h


class Mid(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.scale = Scale()

    def forward(self, x):
        h = torch.sigmoid(self.lin(x))
        return run_block(self.scale, h)


class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.mid = Mid()

    def forward(self, x):
        return run_block(self.mid, x)


model = Top()
loss = F.mse_loss(model(torch.randn(4, 8)), torch.zeros(4, 8))
loss.backward()
print("ok")
