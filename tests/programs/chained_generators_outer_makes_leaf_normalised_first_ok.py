"""The same pipeline of two generators, with the batch normalised in place before it is made a
leaf that requires grad: the in-place change comes first, so torch allows it."""
import torch
import torch.nn as nn


def batches(n):
    for _ in range(n):
        yield torch.rand(4, 5)


def with_input_grad(stream):
    for x in stream:
        x.sub_(0.5)
        yield x.requires_grad_(True)


model = nn.Linear(5, 1)
for x in with_input_grad(batches(2)):
    model(x).sum().backward()
    saliency = x.grad.abs()
