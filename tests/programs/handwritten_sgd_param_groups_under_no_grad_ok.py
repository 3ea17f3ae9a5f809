"""The same hand-written SGD step over `optimizer.param_groups`, decorated with
`@torch.no_grad()` as torch's own optimizers are: the in-place updates are allowed."""
import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.no_grad()
def manual_step(optimizer):
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is None:
                continue
            p.sub_(group["lr"] * p.grad)


model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(2):
    x, y = torch.randn(10, 6), torch.randint(0, 2, (10,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    manual_step(optimizer)
