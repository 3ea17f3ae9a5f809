"""A hand-rolled decoder layer with a static KV cache, trained with teacher forcing step by step:
the cache hands out clones of its keys and values, so what `torch.einsum` saves is never written."""
from dataclasses import dataclass
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TinyConfig:
    hidden_size: int = 32
    num_heads: int = 4
    max_positions: int = 8
    vocab_size: int = 50


class StaticCache:
    def __init__(self, cfg, batch):
        hd = cfg.hidden_size // cfg.num_heads
        # one buffer for keys and values: [2, batch, heads, positions, head_dim]
        self.kv = torch.zeros(2, batch, cfg.num_heads, cfg.max_positions, hd)

    def update(self, k, v, pos):
        self.kv[:, :, :, pos] = torch.stack((k, v))
        return self.kv[0, :, :, : pos + 1].clone(), self.kv[1, :, :, : pos + 1].clone()


class CachedSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.nh = cfg.num_heads
        self.hd = cfg.hidden_size // cfg.num_heads
        self.qkv = nn.Linear(cfg.hidden_size, 3 * cfg.hidden_size)
        self.o_proj = nn.Linear(cfg.hidden_size, cfg.hidden_size)

    def forward(self, x, cache, pos):
        b = x.shape[0]
        q, k, v = self.qkv(x).view(b, 3, self.nh, self.hd).unbind(1)
        keys, values = cache.update(k, v, pos)
        att = torch.einsum("bhd,bhtd->bht", q, keys) / self.hd ** 0.5
        out = torch.einsum("bht,bhtd->bhd", att.softmax(-1), values)
        return self.o_proj(out.reshape(b, -1))


class TinyDecoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.attn = CachedSelfAttention(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)

    def step(self, token, cache, pos):
        h = self.embed(token)
        h = h + self.attn(h, cache, pos)
        return self.lm_head(h)


torch.manual_seed(0)
cfg = TinyConfig()
model = TinyDecoder(cfg)
tokens = torch.randint(0, cfg.vocab_size, (2, 6))
cache = StaticCache(cfg, batch=2)
loss = 0.0
for pos in range(tokens.shape[1] - 1):
    logits = model.step(tokens[:, pos], cache, pos)
    loss = loss + F.cross_entropy(logits, tokens[:, pos + 1])
loss.backward()
