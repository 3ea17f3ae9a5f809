"""`.contiguous()` of a transposed softmax output is a copy: changing it in place leaves the output
softmax saved as it was."""
import torch
x = torch.randn(2, 4, 3, requires_grad=True)
p = x.softmax(dim=-1)
q = p.transpose(1, 2).contiguous()
q.mul_(2)
(p.sum() + q.sum()).backward()
