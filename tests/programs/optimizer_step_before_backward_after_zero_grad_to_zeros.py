"""zero_grad(set_to_none=False) keeps zero grads: the step still writes the weights in place before backward."""
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
model(torch.randn(2, 4)).sum().backward()
for step in range(2):
    x = torch.randn(8, 4, requires_grad=True)
    opt.zero_grad(set_to_none=False)
    loss = model(x).pow(2).mean()
    opt.step()  # expect: GG001
    loss.backward()
