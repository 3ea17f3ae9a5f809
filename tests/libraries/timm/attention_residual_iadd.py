"""A transformer block adds timm.layers.Attention's output onto its input in place; the attention's qkv Linear saved that input."""
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
        x += self.attn(x)  # expect: GG001
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
