"""Cosine-similarity classifier for metric learning: the class prototypes are kept
unit-norm through torch.nn.utils.parametrize, and the embedding projection is
constrained to be orthogonal with parametrizations.orthogonal."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import orthogonal

torch.manual_seed(0)


class RowNormalize(nn.Module):
    """Parametrization: every row of the weight lies on the unit sphere."""

    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, W):
        norms = W.norm(dim=1, keepdim=True)
        norms.clamp_(min=self.eps)  # expect: GG001
        return W / norms


class CosineHead(nn.Module):
    def __init__(self, dim, num_classes, scale=16.0):
        super().__init__()
        self.prototypes = nn.Linear(dim, num_classes, bias=False)
        parametrize.register_parametrization(self.prototypes, "weight", RowNormalize())
        self.log_scale = nn.Parameter(torch.tensor(scale).log())

    def forward(self, z):
        z = F.normalize(z, dim=-1)
        return self.log_scale.exp() * self.prototypes(z)


class Embedder(nn.Module):
    def __init__(self, in_dim=48, dim=32, num_classes=10):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, dim), nn.LayerNorm(dim), nn.GELU())
        self.proj = orthogonal(nn.Linear(dim, dim, bias=False))
        self.head = CosineHead(dim, num_classes)

    def forward(self, x):
        return self.head(self.proj(self.backbone(x)))


model = Embedder()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)

for step in range(4):
    x = torch.randn(16, 48)
    labels = torch.randint(0, 10, (16,))
    with parametrize.cached():
        logits = model(x)
        loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    w = model.head.prototypes.weight
    print(f"step {step}: loss {loss.item():.4f} row-norm {w.norm(dim=1).mean().item():.4f}")
