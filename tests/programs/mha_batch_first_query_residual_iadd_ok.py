"""The same DETR-style layer built with batch_first=True: MultiheadAttention transposes the queries and its projection saves a reshaped copy, not tgt, so `tgt += ...` is safe."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DecoderLayer(nn.Module):
    def __init__(self, dim=16, heads=2, ff=32, dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(dim, ff), nn.ReLU(inplace=True), nn.Linear(ff, dim))
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(3))
        self.drop = nn.Dropout(dropout)

    def forward(self, tgt, memory):
        attn, _ = self.self_attn(tgt, tgt, tgt, need_weights=False)
        tgt += self.drop(attn)
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
        tgt = self.query_embed.weight.unsqueeze(0).repeat(memory.shape[0], 1, 1)
        for layer in self.layers:
            tgt = layer(tgt, memory)
        return self.class_head(tgt)


torch.manual_seed(0)
model = SetPredictor()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-4)
memory = torch.randn(2, 12, 16)
labels = torch.randint(0, 5, (2, 5))
logits = model(memory)
loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten())
opt.zero_grad()
loss.backward()
torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
opt.step()
