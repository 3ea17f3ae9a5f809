"""A gate's bias is an `nn.Parameter` initialised uniformly in place only when `uniform_init` is
passed; this model keeps the default, False, so the in-place init never runs and training runs."""
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, d, uniform_init=False):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d, d) * 0.1)
        self.bias = nn.Parameter(torch.zeros(d))
        if uniform_init:
            self.bias.uniform_(-0.1, 0.1)

    def forward(self, x):
        return torch.sigmoid(x @ self.weight + self.bias) * x


gate = Gate(8)
opt = torch.optim.SGD(gate.parameters(), lr=0.1)
loss = gate(torch.randn(4, 8)).sum()
opt.zero_grad()
loss.backward()
opt.step()
