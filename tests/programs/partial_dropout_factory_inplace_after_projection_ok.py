"""A timm-style transformer is built with `drop_layer=partial(nn.Dropout, inplace=True)`, but its attention keeps a plain `nn.Dropout` for the attention probabilities and uses the factory only after the output projection: Linear does not save its output, so dropping it in place is safe."""
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim, heads=2, attn_drop=0.1, proj_drop=0.1, drop_layer=nn.Dropout):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj_drop = drop_layer(proj_drop)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)
        x = (attn @ v).transpose(1, 2).reshape(b, n, c)
        return self.proj_drop(self.proj(x))


class Block(nn.Module):
    def __init__(self, dim, drop_layer=nn.Dropout, norm_layer=nn.LayerNorm):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, drop_layer=drop_layer)
        self.norm2 = norm_layer(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    def __init__(self, dim=16, depth=2, n_cls=5):
        super().__init__()
        drop_layer = partial(nn.Dropout, inplace=True)
        norm_layer = partial(nn.LayerNorm, eps=1e-6)
        self.embed = nn.Linear(12, dim)
        self.blocks = nn.Sequential(*[Block(dim, drop_layer, norm_layer) for _ in range(depth)])
        self.norm = norm_layer(dim)
        self.head = nn.Linear(dim, n_cls)

    def forward(self, patches):
        x = self.blocks(self.embed(patches))
        return self.head(self.norm(x).mean(dim=1))


torch.manual_seed(0)
model = TinyViT()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
patches, labels = torch.randn(4, 6, 12), torch.randint(0, 5, (4,))
loss = F.cross_entropy(model(patches), labels)
opt.zero_grad()
loss.backward()
opt.step()
