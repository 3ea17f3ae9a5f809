"""A decorator defined in the file runs when the function it decorates is defined: its
in-place change of the saved output of `sigmoid` comes before the backward pass."""
import torch

x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
HANDLERS = []


def handler(fn):
    y.mul_(2)  # expect: GG001
    HANDLERS.append(fn)
    return fn


@handler
def on_step():
    return 1


y.sum().backward()
