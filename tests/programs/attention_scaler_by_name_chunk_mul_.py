"""A self-attention layer dispatches query scaling by a method name built from config with getattr, and the in-place variant mul_s a chunk output of the fused qkv projection."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SelfAttention(nn.Module):
    def __init__(self, dim, heads, cfg):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.scaler = getattr(self, "_scale_" + cfg.get("query_scaling", "inplace"))

    def _scale_copy(self, q):
        return q * self.head_dim ** -0.5

    def _scale_inplace(self, q):
        return q.mul_(self.head_dim ** -0.5)  # expect: GG003

    def _scale_none(self, q):
        return q

    def split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, mask=None):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = self.scaler(q)
        q, k, v = (self.split_heads(t) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(~mask[:, None, None, :], float("-inf"))
        attn = scores.softmax(-1)
        ctx = (attn @ v).transpose(1, 2).reshape(x.shape)
        return self.out(ctx)


class EncoderLayer(nn.Module):
    def __init__(self, dim=32, heads=4, cfg=None):
        super().__init__()
        cfg = cfg or {}
        self.attn = SelfAttention(dim, heads, cfg)
        self.ln1 = nn.LayerNorm(dim)
        self.ln2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x, mask=None):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.ff(self.ln2(x))


layer_cfg = {"query_scaling": "inplace", "dropout": 0.0}
enc = EncoderLayer(cfg=layer_cfg)
head = nn.Linear(32, 2)
tokens = torch.randn(3, 9, 32)
lengths = torch.tensor([9, 6, 4])
mask = torch.arange(9)[None, :] < lengths[:, None]
h = enc(tokens, mask)
pooled = (h * mask.unsqueeze(-1)).sum(1) / lengths.unsqueeze(-1)
loss = F.cross_entropy(head(pooled), torch.tensor([0, 1, 1]))
loss.backward()
print("loss", loss.item())
