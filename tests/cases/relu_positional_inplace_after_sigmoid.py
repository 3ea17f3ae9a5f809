"""F.relu(y, True): inplace passed positionally, on sigmoid's saved output."""
import torch
import torch.nn.functional as F

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
z = F.relu(y, True)  # expect: GG001
z.sum().backward()
