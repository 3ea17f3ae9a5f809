"""Truncated backpropagation through time with a GRU cell: after each window the next window's state is taken
as the last time step of the stacked outputs and detached in place; that state is a view of the stack, and
torch refuses to detach a view in place ("Can't detach views in-place. Use detach() instead")."""
import torch
from torch import nn

torch.manual_seed(0)
cell = nn.GRUCell(8, 16)
head = nn.Linear(16, 8)
optimizer = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.1)
stream = torch.randn(4, 40, 8)
h = torch.zeros(4, 16)
for start in range(0, 30, 10):
    outputs = []
    for t in range(start, start + 10):
        h = cell(stream[:, t], h)
        outputs.append(h)
    out = torch.stack(outputs, dim=1)
    loss = (head(out) - stream[:, start + 1:start + 11]).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    h = out[:, -1]
    h.detach_()  # expect: GG003
