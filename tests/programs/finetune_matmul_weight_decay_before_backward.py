"""The same probe, fine-tuning the backbone: `feats` now requires grad, so matmul saved W for its gradient,
and the decoupled weight decay that shrinks W in place before backward changes it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
backbone = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
W = torch.zeros(8, 5, requires_grad=True)
b = torch.zeros(5, requires_grad=True)
lr, wd = 0.1, 1e-2
for step in range(3):
    images, labels = torch.randn(6, 3, 12, 12), torch.randint(0, 5, (6,))
    feats = backbone(images)
    logits = torch.matmul(feats, W) + b
    loss = F.cross_entropy(logits, labels)
    with torch.no_grad():
        W.mul_(1 - lr * wd)  # expect: GG001
    loss.backward()
    with torch.no_grad():
        for p in (W, b, *backbone.parameters()):
            p -= lr * p.grad
            p.grad = None
print("ok", float(loss))
