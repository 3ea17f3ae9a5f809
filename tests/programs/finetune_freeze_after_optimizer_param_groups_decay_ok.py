"""Fine-tuning: the optimizer is built over the whole model, then the backbone is frozen with
`requires_grad_(False)`; a hand-written weight decay later walks `optimizer.param_groups` and
shrinks the frozen parameters in place. They no longer require grad, so torch allows it."""
import torch
import torch.nn as nn

backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
head = nn.Linear(16, 2)
model = nn.Sequential(backbone, head)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
backbone.requires_grad_(False)

for group in optimizer.param_groups:
    for p in group["params"]:
        if not p.requires_grad:
            p.mul_(0.99)
loss = model(torch.randn(4, 8)).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
