"""step() before backward(), right after zero_grad(): the grads are None, so the step changes nothing (the model never trains, but autograd is intact)."""
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 4, requires_grad=True)
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    opt.step()
    loss.backward()
