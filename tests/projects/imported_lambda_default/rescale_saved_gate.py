"""A gated regressor whose gate values go through a post-processing helper of the project
before the loss; the helper's default post-processing rescales in place."""
import torch

from postproc import finish

torch.manual_seed(0)
w = torch.randn(8, 4, requires_grad=True)
x = torch.randn(16, 8)
gate = torch.sigmoid(x @ w)
scaled = finish(gate, squash=lambda t: t)  # expect: GG001
loss = (scaled * gate).sum()
loss.backward()
