"""A YOLO-style head: `sigmoid_` on the xy slice of a conv's output is its only change in place
(the conv saves its input, not its output); wh takes an out-of-place `exp` and the pieces are
concatenated, so training runs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DetectHead(nn.Module):
    def __init__(self, in_ch=8, num_anchors=3, num_classes=2):
        super().__init__()
        self.na = num_anchors
        self.no = 5 + num_classes
        self.conv = nn.Conv2d(in_ch, self.na * self.no, 1)

    def forward(self, feat, stride=8):
        b, _, h, w = feat.shape
        p = self.conv(feat).view(b, self.na, self.no, h, w).permute(0, 1, 3, 4, 2)
        p = p.contiguous()
        p[..., 0:2].sigmoid_()
        xy = p[..., 0:2] * stride
        wh = torch.exp(p[..., 2:4])
        return torch.cat([xy, wh, p[..., 4:]], dim=-1)


def yolo_loss(pred, target):
    box = F.smooth_l1_loss(pred[..., :4], target[..., :4])
    obj = F.binary_cross_entropy_with_logits(pred[..., 4], target[..., 4])
    return box + obj


torch.manual_seed(0)
backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
head = DetectHead()
params = list(backbone.parameters()) + list(head.parameters())
opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
images = torch.randn(2, 3, 8, 8)
pred = head(backbone(images))
target = torch.rand_like(pred)
loss = yolo_loss(pred, target)
opt.zero_grad()
loss.backward()
opt.step()
