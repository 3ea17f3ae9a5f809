"""An Elman RNN unrolled by hand writes each new hidden state into a preallocated tensor; the cell
saved the previous state, a view of that same tensor, so the next write breaks its backward."""
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
        states = torch.zeros(steps + 1, batch, self.n_hidden)
        for t in range(steps):
            states[t + 1] = self.cell(x[t], states[t])  # expect: GG001
        return self.readout(states[1:])


model = Unrolled(3, 8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(6, 4, 3)
y = torch.randn(6, 4, 2)
loss = (model(x) - y).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
