"""Gates registered by class name with `@register` (`REGISTRY[cls.__name__] = cls`) and built
from a config string. The network sharpens the gate it gets in place; the chosen `SigmoidGate`
returns the output of `sigmoid`, which saved it for backward."""
import torch
import torch.nn as nn

REGISTRY = {}


def register(cls):
    REGISTRY[cls.__name__] = cls
    return cls


@register
class PlainGate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x * self.fc(x)


@register
class SigmoidGate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


class Net(nn.Module):
    def __init__(self, dim, gate="SigmoidGate", sharpen=1.5):
        super().__init__()
        self.stem = nn.Linear(4, dim)
        self.gate = REGISTRY[gate](dim)
        self.head = nn.Linear(dim, 1)
        self.sharpen = sharpen

    def forward(self, x):
        h = torch.relu(self.stem(x))
        g = self.gate(h)
        g *= self.sharpen  # expect: GG001
        return self.head(h * g)


net = Net(16)
net(torch.randn(5, 4)).mean().backward()
