"""The backbone is frozen when the optimizer is built and unfrozen for the second stage; the
hand-written decay over `optimizer.param_groups` then shrinks parameters that require grad again,
outside `torch.no_grad()`, which torch refuses."""
import torch
import torch.nn as nn

backbone = nn.Linear(8, 16)
model = nn.Sequential(backbone, nn.ReLU(), nn.Linear(16, 2))
backbone.requires_grad_(False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
backbone.requires_grad_(True)

for group in optimizer.param_groups:
    for p in group["params"]:
        p.mul_(0.99)  # expect: GG002
model(torch.randn(4, 8)).pow(2).mean().backward()
