"""An init function imported from another file of the project changes a weight outside no_grad;
`model.apply` runs it on each module, so PyTorch raises at the apply call."""
import torch
import torch.nn as nn
from inits import init_weights

model = nn.Sequential(nn.Linear(4, 4))
model.apply(init_weights)  # expect: GG002
model(torch.randn(2, 4)).sum().backward()
