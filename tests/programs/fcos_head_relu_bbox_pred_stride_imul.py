"""An FCOS-style head scales its ReLU'd box regression by the level's stride in place during training
(mmdetection guards that with `if not self.training`): ReLU saved its output for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Scale(nn.Module):
    def __init__(self, init=1.0):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(init))

    def forward(self, x):
        return x * self.scale


class FCOSHead(nn.Module):
    def __init__(self, channels=16, n_classes=3, strides=(8, 16)):
        super().__init__()
        self.strides = strides
        self.tower = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.GroupNorm(4, channels), nn.ReLU())
        self.cls = nn.Conv2d(channels, n_classes, 3, padding=1)
        self.reg = nn.Conv2d(channels, 4, 3, padding=1)
        self.scales = nn.ModuleList([Scale() for _ in strides])

    def forward_single(self, feat, scale, stride):
        h = self.tower(feat)
        bbox_pred = F.relu(scale(self.reg(h)))
        bbox_pred *= stride  # expect: GG001
        return self.cls(h), bbox_pred

    def forward(self, feats):
        return [self.forward_single(f, s, st) for f, s, st in zip(feats, self.scales, self.strides)]


def iou_like_loss(pred, target):
    area = lambda b: (b[:, 0] + b[:, 2]) * (b[:, 1] + b[:, 3])
    inter = (torch.min(pred[:, 0], target[:, 0]) + torch.min(pred[:, 2], target[:, 2])) * \
            (torch.min(pred[:, 1], target[:, 1]) + torch.min(pred[:, 3], target[:, 3]))
    return -torch.log((inter + 1) / (area(pred) + area(target) - inter + 1)).mean()


torch.manual_seed(0)
head = FCOSHead()
opt = torch.optim.SGD(head.parameters(), lr=0.01)
feats = [torch.randn(2, 16, 8, 8), torch.randn(2, 16, 4, 4)]
loss = 0
for (cls_score, bbox_pred), n in zip(head(feats), (8, 4)):
    target = torch.rand(2, 4, n, n) * 32
    loss = loss + iou_like_loss(bbox_pred.permute(0, 2, 3, 1).reshape(-1, 4), target.permute(0, 2, 3, 1).reshape(-1, 4))
    loss = loss + F.binary_cross_entropy_with_logits(cls_score, torch.zeros_like(cls_score))
opt.zero_grad()
loss.backward()
opt.step()
