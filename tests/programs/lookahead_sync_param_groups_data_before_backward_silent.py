"""A Lookahead-style sync copies slow weights into the fast ones through `.data`, walking
`optimizer.param_groups`, after the loss was computed but before its backward: the second
`Linear` saved its weight, so the gradient is computed from the synced weights, with no error."""
import copy

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
reference = copy.deepcopy(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
slow = [p.detach().clone() * 0.5 for p in model.parameters()]

x = torch.randn(6, 3)
loss = model(x).pow(2).mean()
for group in optimizer.param_groups:
    for p, s in zip(group["params"], slow):
        p.data.copy_(s)  # expect: GG004
loss.backward()

reference(x).pow(2).mean().backward()
assert not torch.allclose(model[0].weight.grad, reference[0].weight.grad), "gradient unexpectedly right"
