"""A data pipeline of two generators: the outer one makes each batch a leaf that requires grad
(for an input-gradient saliency map); the loop then normalises the batch in place, which torch
refuses on such a leaf."""
import torch
import torch.nn as nn


def batches(n):
    for _ in range(n):
        yield torch.rand(4, 5)


def with_input_grad(stream):
    for x in stream:
        yield x.requires_grad_(True)


model = nn.Linear(5, 1)
for x in with_input_grad(batches(2)):
    x.sub_(0.5)  # expect: GG002
    model(x).sum().backward()
