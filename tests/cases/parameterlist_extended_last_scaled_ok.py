"""After `extend`, the last place of an `nn.ParameterList` holds the parameter added (`b`), which
nothing saved: only `a` was."""
import torch
import torch.nn as nn

a, b = nn.Parameter(torch.ones(3)), nn.Parameter(torch.ones(3))
scales = nn.ParameterList([a])
scales.extend([b])
x = torch.randn(3, requires_grad=True)
loss = (x * a).sum()
with torch.no_grad():
    scales[-1].mul_(0.5)  # `b`: nothing saved it
loss.backward()
