"""Setting .requires_grad = True makes the tensor a leaf that requires grad: mul_ then fails."""
import torch

w = torch.ones(3)
w.requires_grad = True
w.mul_(2)  # expect: GG002
(w * w).sum().backward()
