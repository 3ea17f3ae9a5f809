"""A training step with two losses calls an `apply_update(optimizer)` helper after the first
backward; the optimizer's step changes the weights in place while the second loss's graph still
needs them (`Linear` saved them), so the second backward raises."""
import torch
import torch.nn as nn


def apply_update(optimizer, clip=None):
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(optimizer.param_groups[0]["params"], clip)
    optimizer.step()  # expect: GG001
    optimizer.zero_grad()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 4), torch.randn(32, 1)
pred = model(x)
fit = (pred - y).pow(2).mean()
smooth = pred.diff(dim=0).abs().mean()
fit.backward(retain_graph=True)
apply_update(optimizer, clip=1.0)
smooth.backward()
