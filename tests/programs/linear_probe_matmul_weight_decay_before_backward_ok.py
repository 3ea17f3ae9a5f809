"""Linear probe on frozen features: the backbone runs under no_grad, the probe is `torch.matmul(feats, W)`
and its decoupled weight decay shrinks W in place before backward. matmul saves W only for the gradient
of `feats`, which does not require grad: nothing backward needs is changed."""
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
    with torch.no_grad():
        feats = backbone(images)
    logits = torch.matmul(feats, W) + b
    loss = F.cross_entropy(logits, labels)
    with torch.no_grad():
        W.mul_(1 - lr * wd)
    loss.backward()
    with torch.no_grad():
        for p in (W, b):
            p -= lr * p.grad
            p.grad = None
print("ok", float(loss))
