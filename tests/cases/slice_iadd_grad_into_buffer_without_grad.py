"""A buffer without grad whose slice `mul` saved: `+=` through the slice puts the buffer in the
graph (CopySlices), and the backward through it needs the slice as it was."""
import torch

r = torch.tensor(2.0, requires_grad=True)
u = torch.rand(8)
growth = r * u[1:-1]
u[1:-1] += growth  # expect: GG001
u.sum().backward()
