"""A model whose forward (scaled in place by its decorator) and loss helper are wrapped by logging and timing decorators."""
import functools
import time

import torch
import torch.nn as nn


def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        wrapper.elapsed = time.perf_counter() - start
        return out
    return wrapper


def scaled(factor):
    def decorate(fn):
        def inner(self, x):
            out = fn(self, x)
            return out.mul_(factor)  # expect: GG001
        return inner
    return decorate


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @scaled(0.5)
    @timed
    def forward(self, x):
        return torch.sigmoid(self.fc(x))


@timed
def loss_fn(pred):
    pred.add_(1.0)
    return pred.pow(2).mean()


torch.manual_seed(0)
net = Net()
out = net(torch.randn(3, 4))
loss_fn(out).backward()
