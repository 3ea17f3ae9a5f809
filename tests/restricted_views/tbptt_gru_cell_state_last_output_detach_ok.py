"""Truncated backpropagation through time with a GRU cell: after each window the cell's last output, which
is the next window's state, is detached in place; it is the cell's own output, not a view of another tensor,
so `detach_()` is allowed and cuts the graph as intended."""
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
    h.detach_()
