"""One optimizer per parameter in a dict keyed by the parameters: a step (the weight has a grad
from the first backward) before the second backward changes the weight the linear layer saved."""
import torch
import torch.nn as nn

model = nn.Linear(4, 4)
opts = {p: torch.optim.SGD([p], lr=0.1) for p in model.parameters()}
x = torch.randn(2, 4, requires_grad=True)
model(x).sum().backward()
out = model(x)
opts[model.weight].step()  # expect: GG001
out.sum().backward()
