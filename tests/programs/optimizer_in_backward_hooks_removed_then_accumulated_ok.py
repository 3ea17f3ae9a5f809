"""Warm-up with optimizer-in-backward hooks, then the hooks are removed and micro-batches are accumulated normally."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))
optimizers = {p: torch.optim.SGD([p], lr=0.05) for p in model.parameters()}


def hook(param):
    optimizers[param].step()
    optimizers[param].zero_grad()


handles = [p.register_post_accumulate_grad_hook(hook) for p in model.parameters()]
x, y = torch.randn(64, 10), torch.randn(64, 1)
F.mse_loss(model(x), y).backward()
for h in handles:
    h.remove()

opt = torch.optim.SGD(model.parameters(), lr=0.01)
opt.zero_grad()
loss_a = F.mse_loss(model(x[:32]), y[:32])
loss_b = F.mse_loss(model(x[32:]), y[32:])
loss_a.backward()
loss_b.backward()
opt.step()
