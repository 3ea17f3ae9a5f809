"""A forward pre-hook written as a lambda changes its module's input in place: `args[0]` is the
output of `nn.Tanh`, which saved it."""
import torch
import torch.nn as nn
net = nn.Sequential(nn.Tanh(), nn.Linear(3, 1))
net[1].register_forward_pre_hook(lambda m, args: args[0].mul_(0.5))  # expect: GG001
x = torch.randn(2, 3, requires_grad=True)
net(x).sum().backward()
