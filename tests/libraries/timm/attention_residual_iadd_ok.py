"""The twin of attention_residual_iadd.py, written out of place (`x = x + self.attn(x)`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from timm.layers import Attention


class Block(nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.embed = nn.Linear(8, dim)
        self.attn = Attention(dim, num_heads=heads)
        self.head = nn.Linear(dim, 2)

    def forward(self, x):
        x = self.embed(x)
        x = x + self.attn(x)
        return self.head(x.mean(1))


torch.manual_seed(0)
model = Block()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(2, 4, 8)
y = torch.tensor([0, 1])
loss = F.cross_entropy(model(x), y)
opt.zero_grad()
loss.backward()
opt.step()
