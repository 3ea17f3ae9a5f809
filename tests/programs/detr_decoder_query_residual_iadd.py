"""A DETR-style decoder layer adds the self-attention output back onto its queries with `tgt += ...`; MultiheadAttention's input projection saved a view of tgt (sequence-first layout, as in DETR)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DecoderLayer(nn.Module):
    def __init__(self, dim=16, heads=2, ff=32, dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(dim, heads, dropout=dropout)
        self.cross_attn = nn.MultiheadAttention(dim, heads, dropout=dropout)
        self.ffn = nn.Sequential(nn.Linear(dim, ff), nn.ReLU(inplace=True), nn.Linear(ff, dim))
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(3))
        self.drop = nn.Dropout(dropout)

    def forward(self, tgt, memory):
        attn, _ = self.self_attn(tgt, tgt, tgt, need_weights=False)
        tgt += self.drop(attn)  # expect: GG001
        tgt = self.norms[0](tgt)
        tgt = self.norms[1](tgt + self.drop(self.cross_attn(tgt, memory, memory, need_weights=False)[0]))
        return self.norms[2](tgt + self.drop(self.ffn(tgt)))


class SetPredictor(nn.Module):
    def __init__(self, n_queries=5, dim=16, n_cls=4, depth=2):
        super().__init__()
        self.query_embed = nn.Embedding(n_queries, dim)
        self.layers = nn.ModuleList(DecoderLayer(dim) for _ in range(depth))
        self.class_head = nn.Linear(dim, n_cls + 1)

    def forward(self, memory):
        tgt = self.query_embed.weight.unsqueeze(1).repeat(1, memory.shape[1], 1)
        for layer in self.layers:
            tgt = layer(tgt, memory)
        return self.class_head(tgt)


torch.manual_seed(0)
model = SetPredictor()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-4)
memory = torch.randn(12, 2, 16)
labels = torch.randint(0, 5, (5, 2))
logits = model(memory)
loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten())
opt.zero_grad()
loss.backward()
torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
opt.step()
