"""Two heads share an encoder; after the first head's backward a helper takes a plain SGD step on
the second head through `.data`, then the second loss goes backward. Its `Linear` saved its weight
(its input requires grad), so that gradient is computed from changed weights, with no error."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def sgd_through_data(params, lr):
    for p in params:
        if p.grad is None:
            continue
        p.data.add_(p.grad, alpha=-lr)  # expect: GG004
        p.grad = None


torch.manual_seed(0)
encoder, head_a, head_b = nn.Linear(4, 8), nn.Linear(8, 1), nn.Linear(8, 1)
twin = [copy.deepcopy(m) for m in (encoder, head_a, head_b)]
x, ya, yb = torch.randn(16, 4), torch.randn(16, 1), torch.randn(16, 1)
head_b.weight.grad = torch.ones_like(head_b.weight)  # left over from an earlier step

z = torch.tanh(encoder(x))
loss_a = F.mse_loss(head_a(z), ya)
loss_b = F.mse_loss(head_b(z), yb)
loss_a.backward(retain_graph=True)
sgd_through_data(head_b.parameters(), lr=0.5)
loss_b.backward()

twin_z = torch.tanh(twin[0](x))
twin_loss = F.mse_loss(twin[1](twin_z), ya) + F.mse_loss(twin[2](twin_z), yb)
want = torch.autograd.grad(twin_loss, twin[0].weight)[0]
assert not torch.allclose(encoder.weight.grad, want), "gradient unexpectedly right"
