"""`F.logsigmoid` saves its input: changing the input in place afterwards breaks backward."""
import torch
import torch.nn.functional as F

x = torch.randn(3, 4, requires_grad=True)
s = x * 1
loss = -F.logsigmoid(s).mean()
s.clamp_(-1, 1)  # expect: GG001
loss.backward()
