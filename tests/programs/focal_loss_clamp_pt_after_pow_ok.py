"""A focal loss clamps p_t in place after `(1 - p_t) ** gamma`: pow saved the fresh `1 - p_t` tensor, not p_t, and log then saves the clamped p_t."""
import torch
import torch.nn as nn


class FocalLoss(nn.Module):
    def __init__(self, gamma=2.0, alpha=0.25, eps=1e-6):
        super().__init__()
        self.gamma, self.alpha, self.eps = gamma, alpha, eps

    def forward(self, logits, targets):
        p = torch.sigmoid(logits)
        p_t = p * targets + (1 - p) * (1 - targets)
        modulating = (1 - p_t) ** self.gamma
        p_t.clamp_(min=self.eps)
        alpha_t = self.alpha * targets + (1 - self.alpha) * (1 - targets)
        return (-alpha_t * modulating * torch.log(p_t)).sum() / targets.sum().clamp(min=1.0)


class Detector(nn.Module):
    def __init__(self, n_anchors=4, n_cls=3):
        super().__init__()
        self.n_anchors, self.n_cls = n_anchors, n_cls
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.cls = nn.Conv2d(8, n_anchors * n_cls, 3, padding=1)

    def forward(self, x):
        out = self.cls(self.backbone(x))
        return out.permute(0, 2, 3, 1).reshape(x.shape[0], -1, self.n_cls)


torch.manual_seed(0)
model, criterion = Detector(), FocalLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
for step in range(2):
    images = torch.randn(2, 3, 8, 8)
    targets = (torch.rand(2, 8 * 8 * 4, 3) < 0.05).float()
    loss = criterion(model(images), targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
