"""A hand-written SGD step walks `optimizer.param_groups` and updates each parameter in place,
but the function is not under `torch.no_grad()`: each parameter is a leaf that requires grad,
so the first update raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def manual_step(optimizer, momentum=0.0):
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is None:
                continue
            p.sub_(group["lr"] * p.grad)  # expect: GG002


model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(10, 6), torch.randint(0, 2, (10,))
loss = F.cross_entropy(model(x), y)
optimizer.zero_grad()
loss.backward()
manual_step(optimizer)
