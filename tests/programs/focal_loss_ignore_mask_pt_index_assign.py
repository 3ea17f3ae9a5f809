"""A focal loss for dense labelling drops ignored pixels by setting their `pt` to 1 (so that
`(1 - pt) ** gamma` is 0) with a masked assignment: pt is exp's output, saved for its backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FocalLoss(nn.Module):
    def __init__(self, gamma=2.0, ignore_index=255):
        super().__init__()
        self.gamma = gamma
        self.ignore_index = ignore_index

    def forward(self, logits, target):
        ignored = target == self.ignore_index
        safe_target = target.masked_fill(ignored, 0)
        ce = F.cross_entropy(logits, safe_target, reduction="none")
        pt = torch.exp(-ce)
        pt[ignored] = 1.0  # expect: GG001
        loss = (1 - pt) ** self.gamma * ce
        return loss.sum() / (~ignored).sum().clamp(min=1)


class TinySegNet(nn.Module):
    def __init__(self, n_classes=5):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                                  nn.Conv2d(16, n_classes, 1))

    def forward(self, x):
        return self.body(x)


torch.manual_seed(0)
model, criterion = TinySegNet(), FocalLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
images = torch.randn(2, 3, 16, 16)
target = torch.randint(0, 5, (2, 16, 16))
target[:, :2] = 255
loss = criterion(model(images), target)
opt.zero_grad()
loss.backward()
opt.step()
