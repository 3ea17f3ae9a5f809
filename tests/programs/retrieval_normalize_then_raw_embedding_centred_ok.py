"""A retrieval model L2-normalises its embeddings with `F.normalize` for a contrastive loss, then
centres the raw embeddings out of place for a decorrelation term: what `F.normalize` saved stays
as it was, so training runs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, dim=10, emb=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, 32), nn.BatchNorm1d(32), nn.ReLU(inplace=True))
        self.proj = nn.Linear(32, emb)

    def forward(self, x):
        return self.proj(self.body(x))


def info_nce(za, zb, temperature=0.1):
    logits = za @ zb.t() / temperature
    labels = torch.arange(za.shape[0])
    return F.cross_entropy(logits, labels)


def decorrelation(emb):
    emb = emb - emb.mean(dim=0, keepdim=True)
    cov = emb.t() @ emb / (emb.shape[0] - 1)
    off = cov - torch.diag(torch.diagonal(cov))
    return off.pow(2).sum() / emb.shape[1]


torch.manual_seed(0)
enc = Encoder()
opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
x = torch.randn(8, 10)
view_a, view_b = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
ea, eb = enc(view_a), enc(view_b)
za, zb = F.normalize(ea, dim=-1), F.normalize(eb, dim=-1)
loss = info_nce(za, zb) + 0.01 * decorrelation(ea)
opt.zero_grad()
loss.backward()
opt.step()
