"""Writing grad-requiring values into slices of a buffer without grad is fine when nothing saved
the buffer: `exp` saves its own output, not the slice it reads."""
import torch

r = torch.tensor(2.0, requires_grad=True)
u = torch.zeros(8)
u[1:-1] += r * torch.ones(6)
u[0] = u[1]
w = torch.zeros(8)
w[2:4] += (r * u[2:4]).exp()
w.sum().backward()
