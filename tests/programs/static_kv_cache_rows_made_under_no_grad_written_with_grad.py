"""Chunked training through a preallocated key/value cache whose per-layer rows `__init__` (under
`@torch.no_grad()`) made as views: the first key written into one with grad on raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class StaticCache:
    """Preallocated per-layer K/V buffers (keys and values stacked), HF StaticCache style."""

    @torch.no_grad()
    def __init__(self, n_layers, batch, n_heads, max_len, head_dim, dtype=torch.float32):
        self._kv = torch.zeros(n_layers, 2, batch, n_heads, max_len, head_dim, dtype=dtype)
        self.kv_cache = [self._kv[i] for i in range(n_layers)]
        self.seen = 0

    def update(self, k, v, layer_idx, start):
        end = start + k.size(2)
        self.kv_cache[layer_idx][:, :, :, start:end] = torch.stack((k, v))  # expect: GG003
        keys, values = self.kv_cache[layer_idx][:, :, :, :end]
        return keys, values


class Attention(nn.Module):
    def __init__(self, dim, n_heads, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cache=None, start_pos=0):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if cache is not None:
            k, v = cache.update(k, v, self.layer_idx, start_pos)
        S = k.size(2)
        mask = torch.ones(T, S, dtype=torch.bool).tril(diagonal=S - T)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class Decoder(nn.Module):
    def __init__(self, vocab=32, dim=32, n_heads=4, n_layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Attention(dim, n_heads, i) for i in range(n_layers))
        self.norms = nn.ModuleList(nn.RMSNorm(dim) for _ in range(n_layers))
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids, cache=None, start_pos=0):
        h = self.emb(ids)
        for norm, layer in zip(self.norms, self.layers):
            h = h + layer(norm(h), cache=cache, start_pos=start_pos)
        return self.head(h)


def train_step(model, seq, chunk=8):
    B, L = seq.shape
    cache = StaticCache(len(model.layers), B, 4, L, 8)
    loss = 0
    n = 0
    for start in range(0, L - 1, chunk):
        inp = seq[:, start:start + chunk]
        tgt = seq[:, start + 1:start + chunk + 1]
        inp = inp[:, : tgt.size(1)]
        logits = model(inp, cache=cache, start_pos=start)
        loss = loss + F.cross_entropy(logits.flatten(0, 1), tgt.flatten(), reduction="sum")
        n += tgt.numel()
    return loss / n


def main():
    torch.manual_seed(0)
    model = Decoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    seq = torch.randint(0, 32, (2, 25))
    for it in range(3):
        loss = train_step(model, seq)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(it, loss.item())


if __name__ == "__main__":
    main()
