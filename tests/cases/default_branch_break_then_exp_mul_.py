"""With its default, the loop never takes the branch that detaches and breaks: `x` requires grad, exp saves its output and the in-place `mul_` breaks backward."""
import torch


def step(retries, frozen=False):
    x = torch.randn(3, requires_grad=True)
    for _ in range(retries):
        if frozen:
            x = x.detach()
            break
        x = x * 2
    w = x.exp()
    w.mul_(2)  # expect: GG001
    w.sum().backward()


step(2)
