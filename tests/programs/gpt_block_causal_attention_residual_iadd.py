"""A GPT-style block adds its attention and MLP outputs to the residual stream in place
(`x += self.attn(x)`, `x += self.mlp(x)`): the fused qkv Linear and the MLP's first Linear each
saved x for backward, so each `+=` breaks backward on its own."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, max_len, p_drop=0.1):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn_drop = nn.Dropout(p_drop)
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.n_heads, c // self.n_heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(~self.causal[:t, :t], float("-inf"))
        att = self.attn_drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, d_model=32, n_heads=4, max_len=16):
        super().__init__()
        self.attn = CausalSelfAttention(d_model, n_heads, max_len)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x += self.attn(x)  # expect: GG001
        x += self.mlp(x)  # expect: GG001
        return x


class TinyGPT(nn.Module):
    def __init__(self, vocab=50, d_model=32, n_layers=2, max_len=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d_model))
        self.blocks = nn.ModuleList([Block(d_model, max_len=max_len) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos[:, :idx.size(1)]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


torch.manual_seed(0)
model = TinyGPT()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
idx = torch.randint(0, 50, (4, 12))
logits = model(idx[:, :-1])
loss = F.cross_entropy(logits.reshape(-1, 50), idx[:, 1:].reshape(-1))
opt.zero_grad()
loss.backward()
opt.step()
