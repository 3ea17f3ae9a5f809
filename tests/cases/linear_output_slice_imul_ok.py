"""`*=` on a slice of a Linear output: linear saves its input and weight, not its output."""
import torch
import torch.nn as nn

fc = nn.Linear(4, 3)
h = fc(torch.randn(2, 4))
h[:, 0] *= 2
h.sum().backward()
