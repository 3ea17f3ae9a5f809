"""A gated regressor whose gate values go through a post-processing helper of the project
that works on a copy before the loss."""
import torch

from postproc import finish_copy

torch.manual_seed(0)
w = torch.randn(8, 4, requires_grad=True)
x = torch.randn(16, 8)
gate = torch.sigmoid(x @ w)
scaled = finish_copy(gate)
loss = (scaled * gate).sum()
loss.backward()
