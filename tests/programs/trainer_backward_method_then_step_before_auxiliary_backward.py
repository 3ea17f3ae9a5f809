"""A trainer whose backward lives in its own method; the step runs before the auxiliary loss's backward."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.model = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def backward(self, loss):
        loss.backward(retain_graph=True)

    def step(self, x):
        out = self.model(x)
        self.opt.zero_grad()
        self.backward(out.pow(2).mean())
        self.opt.step()  # expect: GG001
        out.abs().mean().backward()


Trainer().step(torch.randn(8, 4, requires_grad=True))
