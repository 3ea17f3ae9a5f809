"""An Elman RNN unrolled by hand keeps each hidden state in a list and stacks them at the end:
no state is ever written in place, so every one the cell saved is intact at backward."""
import torch
import torch.nn as nn


class Unrolled(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.cell = nn.RNNCell(n_in, n_hidden)
        self.readout = nn.Linear(n_hidden, n_out)
        self.n_hidden = n_hidden

    def forward(self, x):
        steps, batch, _ = x.shape
        h = torch.zeros(batch, self.n_hidden)
        states = []
        for t in range(steps):
            h = self.cell(x[t], h)
            states.append(h)
        return self.readout(torch.stack(states))


model = Unrolled(3, 8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(6, 4, 3)
y = torch.randn(6, 4, 2)
loss = (model(x) - y).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
