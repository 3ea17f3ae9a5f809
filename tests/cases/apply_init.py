"""model.apply with an init function that changes weights outside no_grad."""
import torch
import torch.nn as nn


def init_weights(m):
    if isinstance(m, nn.Linear):
        m.weight.normal_(0, 0.02)  # expect: GG002


model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
model.apply(init_weights)
model(torch.randn(2, 4)).sum().backward()
