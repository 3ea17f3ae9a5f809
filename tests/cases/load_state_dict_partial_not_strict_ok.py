"""`load_state_dict(..., strict=False)` of the last bias only, between the forward and the
backward pass: the weights `Linear` saved are not loaded into."""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
loss = net(torch.randn(2, 4)).sum()
net.load_state_dict({"2.bias": torch.zeros(1)}, strict=False)
loss.backward()
