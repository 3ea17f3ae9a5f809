"""Activation functions registered under their function name (`ACTS[fn.__name__] = fn`) and
picked by a config string; the layer rescales the activation's output in place. The chosen
`hard_sigmoid_ish` returns `torch.sigmoid`'s output, which sigmoid saved for backward."""
import torch
import torch.nn as nn

ACTS = {}


def register(fn):
    ACTS[fn.__name__] = fn
    return fn


@register
def leaky(x):
    return nn.functional.leaky_relu(x, 0.1)


@register
def hard_sigmoid_ish(x):
    return torch.sigmoid(2.0 * x)


class Layer(nn.Module):
    def __init__(self, dim, act="hard_sigmoid_ish"):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = ACTS[act]

    def forward(self, x):
        y = self.act(self.fc(x))
        y.mul_(0.5)  # expect: GG001
        return y


layer = Layer(8)
layer(torch.randn(3, 8)).sum().backward()
