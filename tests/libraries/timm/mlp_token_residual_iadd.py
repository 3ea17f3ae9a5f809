"""A token-mixing block adds timm.layers.Mlp's output onto its input in place; the Mlp's fc1 saved that input for its weight's gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from timm.layers import Mlp


class MixerBlock(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.mlp = Mlp(dim, hidden_features=4 * dim)

    def forward(self, x):
        x = self.proj(x)
        x += self.mlp(x)  # expect: GG001
        return x


torch.manual_seed(0)
block = MixerBlock()
head = nn.Linear(16, 3)
opt = torch.optim.SGD([*block.parameters(), *head.parameters()], lr=0.1)
tokens = torch.randn(2, 5, 16)
labels = torch.randint(0, 3, (2,))
loss = F.cross_entropy(head(block(tokens).mean(1)), labels)
opt.zero_grad()
loss.backward()
opt.step()
