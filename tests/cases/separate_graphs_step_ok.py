"""Each loss has its own graph: stepping after the first backward leaves the second graph alone."""
import torch
import torch.nn as nn

A = nn.Linear(3, 1)
B = nn.Linear(3, 1)
opt_a = torch.optim.SGD(A.parameters(), lr=0.1)
loss_a = A(torch.randn(4, 3)).sum()
loss_b = B(torch.randn(4, 3)).sum()
loss_a.backward()
opt_a.step()
loss_b.backward()
