"""copy_ into a column of a module's weight outside no_grad: a view of a leaf that requires grad."""
import torch
import torch.nn as nn

fc = nn.Linear(3, 2)
fc.weight[:, 0].copy_(torch.ones(2))  # expect: GG002
fc(torch.randn(4, 3)).sum().backward()
