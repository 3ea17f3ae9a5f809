"""Updating parameters by hand outside no_grad: each one is a leaf that requires grad."""
import torch
import torch.nn as nn

model = nn.Linear(3, 1)
for p in model.parameters():
    p.add_(0.01)  # expect: GG002
model(torch.randn(2, 3)).sum().backward()
