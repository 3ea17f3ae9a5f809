"""An attention-pooling layer's staticmethod applies F.dropout(..., inplace=True) to the softmax weights; softmax saved its output, which the in-place dropout scales."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AttentionPool(nn.Module):
    def __init__(self, dim, attn_drop=0.1):
        super().__init__()
        self.query = nn.Parameter(torch.randn(dim) * dim ** -0.5)
        self.key = nn.Linear(dim, dim)
        self.attn_drop = attn_drop

    @staticmethod
    def attend(q, k, v, p, training):
        weights = torch.softmax(k @ q / k.shape[-1] ** 0.5, dim=-1)
        F.dropout(weights, p, training=training, inplace=True)  # expect: GG001
        return (weights.unsqueeze(-1) * v).sum(dim=1)

    def forward(self, x):
        return self.attend(self.query, self.key(x), x, self.attn_drop, self.training)


class DocClassifier(nn.Module):
    def __init__(self, vocab=60, dim=16, n_cls=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.CELU())
        self.pool = AttentionPool(dim)
        self.cls = nn.Linear(dim, n_cls)

    def forward(self, ids):
        return self.cls(self.pool(self.encoder(self.embed(ids))))


torch.manual_seed(0)
model = DocClassifier()
opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
ids, labels = torch.randint(0, 60, (4, 11)), torch.randint(0, 3, (4,))
loss = F.cross_entropy(model(ids), labels)
opt.zero_grad()
loss.backward()
opt.step()
