"""Nested searches: a line search (range(16) with a return) inside an outer iteration loop (range(16) with a break) inside an epoch loop; each line-search step runs the model."""
import torch
import torch.nn as nn


def model_loss(model, x, y):
    return ((model(x) - y) ** 2).mean()


def line_search(model, x, y, direction, base):
    step = 1.0
    for k in range(16):
        with torch.no_grad():
            for p, d in zip(model.parameters(), direction):
                p.add_(d, alpha=-step)
        new = model_loss(model, x, y)
        if new.item() < base.item():
            return step
        with torch.no_grad():
            for p, d in zip(model.parameters(), direction):
                p.add_(d, alpha=step)
        step *= 0.5
    return 0.0


def optimise(model, x, y):
    for it in range(16):
        loss = model_loss(model, x, y)
        grads = torch.autograd.grad(loss, list(model.parameters()))
        step = line_search(model, x, y, grads, loss.detach())
        if step == 0.0:
            break


model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
x, y = torch.randn(32, 8), torch.randn(32, 1)
for epoch in range(4):
    optimise(model, x, y)
h = torch.tanh(model(x))
h.mul_(2)  # expect: GG001
h.sum().backward()
print("ok")
