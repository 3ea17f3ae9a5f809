"""An `nn.ParameterList` item assigned a new parameter: the change in place is to the new one,
not to `a`, which `*` saved."""
import torch
import torch.nn as nn

a = nn.Parameter(torch.ones(3))
scales = nn.ParameterList([a])
x = torch.randn(3, requires_grad=True)
loss = (x * a).sum()
scales[0] = nn.Parameter(torch.zeros(3))
with torch.no_grad():
    scales[0].mul_(0.5)  # the new parameter, not `a`
loss.backward()
