"""Two changes through .data of log_softmax's saved output: the first one met the save and is the
one reported; the gradient is silently wrong."""
import torch

w = torch.randn(3, 5, requires_grad=True)
y = torch.log_softmax(w, dim=1)
expected = torch.autograd.grad(y[:, 0].sum(), w, retain_graph=True)[0]
target = y.data
target.fill_(0.1)  # expect: GG004
target.scatter_(1, torch.zeros(3, 1, dtype=torch.long), 0.6)
y[:, 0].sum().backward()
assert not torch.allclose(w.grad, expected), "gradient unexpectedly right"
