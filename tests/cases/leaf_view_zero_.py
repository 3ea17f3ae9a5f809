"""zero_ on a view of a leaf that requires grad."""
import torch

w = torch.randn(2, 3, requires_grad=True)
flat = w.view(-1)
flat.zero_()  # expect: GG002
(w * 2).sum().backward()
