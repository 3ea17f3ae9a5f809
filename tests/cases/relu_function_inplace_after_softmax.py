"""torch.relu_ (the in-place function form) on softmax's saved output."""
import torch

logits = torch.randn(2, 3, requires_grad=True)
p = torch.softmax(logits, dim=1)
torch.relu_(p)  # expect: GG001
p.sum().backward()
