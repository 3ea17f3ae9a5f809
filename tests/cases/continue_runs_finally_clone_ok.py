"""A `continue` inside `try` still runs its `finally`, which replaces `z` by a clone: the later `mul_` leaves exp's saved output intact."""
import torch

x = torch.randn(3, requires_grad=True)
z = x.exp()
for i in range(1):
    try:
        if i == 0:
            continue
    finally:
        z = z.clone()
z.mul_(2)
z.sum().backward()
