"""Fixed (frozen) classifier on trainable features; features are rescaled in place after the head.
Only the features require grad, so the matmul saves the frozen weight, not the features."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(24, 48), nn.Tanh(), nn.Linear(48, 32))

    def forward(self, x):
        return self.body(x)


class FixedClassifier(nn.Module):
    def __init__(self, dim, n_classes):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_classes, dim) * 0.02, requires_grad=False)

    def forward(self, feats):
        return F.linear(feats, self.weight)


torch.manual_seed(0)
backbone, head = Backbone(), FixedClassifier(32, 4)
opt = torch.optim.SGD(backbone.parameters(), lr=0.1)

for _ in range(3):
    x, y = torch.randn(12, 24), torch.randint(0, 4, (12,))
    feats = backbone(x)
    logits = head(feats)
    loss = F.cross_entropy(logits, y)
    feats.div_(feats.norm(dim=1, keepdim=True).detach())
    opt.zero_grad()
    loss.backward()
    opt.step()
