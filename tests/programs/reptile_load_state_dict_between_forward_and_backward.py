"""A meta-learning step restores the starting weights with `load_state_dict` after the inner
loss was computed but before its backward: loading copies into every parameter in place, and
the second `Linear` saved its weight for backward, so `backward()` raises."""
import copy

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
start = copy.deepcopy(model.state_dict())
x, y = torch.randn(8, 4), torch.randn(8, 1)
inner_loss = (model(x) - y).pow(2).mean()
model.load_state_dict(start)  # expect: GG001
inner_loss.backward()
