"""A gate activated with the package's default activation, built at import time by a factory in
another file of the package: an in-place ReLU, which changes the output `torch.sigmoid` saved."""
import torch
import torch.nn as nn

from blocks.defaults import DEFAULT_ACT, HIDDEN

torch.manual_seed(0)
fc = nn.Linear(HIDDEN, HIDDEN)
gate = torch.sigmoid(fc(torch.randn(4, HIDDEN)))
out = DEFAULT_ACT(gate)  # expect: GG001
out.sum().backward()
