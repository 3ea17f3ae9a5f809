"""Linear probe: frozen backbone features feed a trainable head; features are rescaled in place after the head."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(24, 48), nn.Tanh(), nn.Linear(48, 32))

    def forward(self, x):
        return self.body(x)


class LinearProbe(nn.Module):
    def __init__(self, dim, n_classes):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_classes, dim) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_classes))

    def forward(self, feats):
        return F.linear(feats, self.weight, self.bias)


torch.manual_seed(0)
backbone, probe = Backbone().eval(), LinearProbe(32, 4)
backbone.requires_grad_(False)
opt = torch.optim.SGD(probe.parameters(), lr=0.1)

for _ in range(3):
    x, y = torch.randn(12, 24), torch.randint(0, 4, (12,))
    feats = backbone(x)
    logits = probe(feats)
    loss = F.cross_entropy(logits, y)
    feats.div_(feats.norm(dim=1, keepdim=True))  # expect: GG001
    opt.zero_grad()
    loss.backward()
    opt.step()
