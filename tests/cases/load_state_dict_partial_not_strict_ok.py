import torch
import torch.nn as nn

# `strict=False` with only the last bias: the first layer's weight is not loaded into
net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
loss = net(torch.randn(2, 4)).sum()
net.load_state_dict({"2.bias": torch.zeros(1)}, strict=False)
loss.backward()
