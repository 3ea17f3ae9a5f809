"""clamp_ on a leaf that requires grad, outside no_grad."""
import torch

w = torch.randn(3, requires_grad=True)
w.clamp_(-0.5, 0.5)  # expect: GG002
(w ** 2).sum().backward()
