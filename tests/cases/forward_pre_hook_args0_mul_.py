"""A forward pre-hook changes its module's input in place: `args[0]` is the output of `nn.Tanh`,
which saved it."""
import torch
import torch.nn as nn
net = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))


def hook(module, args):
    args[0].mul_(0.5)  # expect: GG001


net[2].register_forward_pre_hook(hook)
net(torch.randn(2, 3)).sum().backward()
