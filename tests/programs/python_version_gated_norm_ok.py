"""An RMS-normalised MLP with a fallback norm for old Python versions (no functools.cached_property there),
trained for a few steps; its scale is clamped out of place."""
import sys

import torch
import torch.nn as nn

if sys.version_info >= (3, 8):
    def rms_norm(x, weight, eps=1e-6):
        scale = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        scale = scale.clamp(max=1e3)
        return x * scale * weight
else:
    def rms_norm(x, weight, eps=1e-6):
        out = x / (x.norm(dim=-1, keepdim=True) + eps)
        out.mul_(weight)
        return out


class Net(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.norm_weight = nn.Parameter(torch.ones(dim))
        self.fc2 = nn.Linear(dim, 2)

    def forward(self, x):
        return self.fc2(rms_norm(torch.relu(self.fc1(x)), self.norm_weight))


torch.manual_seed(0)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    loss = nn.functional.cross_entropy(net(torch.randn(8, 16)), torch.randint(0, 2, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
