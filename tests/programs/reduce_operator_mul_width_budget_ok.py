"""A layer's width is the product of its feature dims (`functools.reduce(operator.mul, dims, 1)`):
only a layer wider than the budget has its activations rescaled in place, and this one is not."""
import functools
import operator

import torch
import torch.nn as nn

FEATURE_DIMS = (4, 6)
BUDGET = 64

torch.manual_seed(0)
width = functools.reduce(operator.mul, FEATURE_DIMS, 1)
layer = nn.Linear(8, width)
act = torch.sigmoid(layer(torch.randn(2, 8)))
if width > BUDGET:
    act.mul_(BUDGET / width)
act.sum().backward()
