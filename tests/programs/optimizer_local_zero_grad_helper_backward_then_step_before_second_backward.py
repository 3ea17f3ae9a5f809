"""A training function keeps its optimizer in a local; the first loss's backward runs in a helper."""
import torch
import torch.nn as nn


def backward_of(loss):
    loss.backward(retain_graph=True)


def train():
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 4, requires_grad=True)
    out = model(x)
    opt.zero_grad()
    backward_of(out.pow(2).mean())
    opt.step()  # expect: GG001
    out.abs().mean().backward()


train()
