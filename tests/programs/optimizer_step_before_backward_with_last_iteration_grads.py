"""step() before backward() with the previous iteration's grads: the second pass's step changes the weight the linear layer saved."""
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 4, requires_grad=True)
    loss = model(x).pow(2).mean()
    opt.step()  # expect: GG001
    loss.backward()
