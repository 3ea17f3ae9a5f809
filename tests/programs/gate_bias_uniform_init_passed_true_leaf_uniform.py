"""A gate's bias is an `nn.Parameter` initialised uniformly in place when `uniform_init` is passed;
the default is False, but this model passes True, so the in-place op on a leaf that requires grad
raises while the model is built."""
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, d, uniform_init=False):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d, d) * 0.1)
        self.bias = nn.Parameter(torch.zeros(d))
        if uniform_init:
            self.bias.uniform_(-0.1, 0.1)  # expect: GG002

    def forward(self, x):
        return torch.sigmoid(x @ self.weight + self.bias) * x


gate = Gate(8, uniform_init=True)
opt = torch.optim.SGD(gate.parameters(), lr=0.1)
loss = gate(torch.randn(4, 8)).sum()
opt.zero_grad()
loss.backward()
opt.step()
