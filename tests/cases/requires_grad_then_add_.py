"""requires_grad_() turns a plain tensor into a leaf that requires grad: add_ on it then fails."""
import torch

w = torch.zeros(3)
w.requires_grad_()
w.add_(1)  # expect: GG002
(w * 2).sum().backward()
