"""A loop initialises a bias from one batch under no_grad and breaks out of the `with`: grad is on again after the loop, so sigmoid saves its output and the later `mul_` breaks backward."""
import torch

model = torch.nn.Linear(4, 4)
batches = [torch.randn(2, 4) for _ in range(3)]
for batch in batches:
    with torch.no_grad():
        model.bias.copy_(model(batch).mean(0))
        break

x = torch.randn(2, 4, requires_grad=True)
y = model(x).sigmoid()
y.mul_(2)  # expect: GG001
y.sum().backward()
