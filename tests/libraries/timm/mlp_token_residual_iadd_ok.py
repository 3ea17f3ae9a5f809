"""The twin of mlp_token_residual_iadd.py, written out of place (`x = x + self.mlp(x)`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
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
        x = x + self.mlp(x)
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
