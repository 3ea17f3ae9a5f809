"""Either branch saves its output: add_ on the result breaks backward whichever ran."""
import torch
import random

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x) if random.random() < 0.5 else torch.tanh(x)
y.add_(1)  # expect: GG001
y.sum().backward()
