"""A helper normalises a tensor by its norm in place; a gated block calls it on an activation in
`forward`, with grad on, so the norm's saved input is changed and backward raises."""
import torch
import torch.nn as nn


def _rms_normalise_(x, eps=1e-6):
    scale = x.norm()
    x.div_(scale + eps)  # expect: GG001
    return x


class NormalisedBlock(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        h = torch.tanh(self.proj(x))
        return _rms_normalise_(h)


block = NormalisedBlock()
opt = torch.optim.SGD(block.parameters(), lr=0.1)
x = torch.randn(4, 8)
loss = block(x).pow(2).sum()
opt.zero_grad()
loss.backward()
opt.step()
