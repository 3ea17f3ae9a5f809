"""A slice of an `nn.ParameterList` holds the parameters at those places: scaling them in place
under `no_grad` changes `b`, which `*` saved."""
import torch
import torch.nn as nn

a, b, c = (nn.Parameter(torch.ones(3)) for _ in range(3))
scales = nn.ParameterList([a, b, c])
x = torch.randn(3, requires_grad=True)
loss = (x * b).sum()
with torch.no_grad():
    for scale in scales[1:]:
        scale.mul_(0.5)  # expect: GG001
loss.backward()
