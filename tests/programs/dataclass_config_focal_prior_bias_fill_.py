"""A RetinaNet-style head reads its prior probability from a dataclass config and sets the classification bias with bias.fill_() outside no_grad: an in-place change of a leaf that requires grad."""
import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class HeadConfig:
    in_ch: int = 8
    num_classes: int = 3
    num_convs: int = 2
    prior_prob: float = 0.01
    groups: list = field(default_factory=lambda: [4, 4])


class ClassificationHead(nn.Module):
    def __init__(self, cfg: HeadConfig):
        super().__init__()
        tower = []
        for g in cfg.groups[: cfg.num_convs]:
            tower += [nn.Conv2d(cfg.in_ch, cfg.in_ch, 3, padding=1), nn.GroupNorm(g, cfg.in_ch), nn.ReLU(inplace=True)]
        self.tower = nn.Sequential(*tower)
        self.cls_logits = nn.Conv2d(cfg.in_ch, cfg.num_classes, 3, padding=1)
        self.reset_parameters(cfg)

    def reset_parameters(self, cfg):
        nn.init.normal_(self.cls_logits.weight, std=0.01)
        self.cls_logits.bias.fill_(-math.log((1 - cfg.prior_prob) / cfg.prior_prob))  # expect: GG002

    def forward(self, feats):
        return [self.cls_logits(self.tower(f)) for f in feats]


torch.manual_seed(0)
head = ClassificationHead(HeadConfig())
opt = torch.optim.SGD(head.parameters(), lr=0.01, momentum=0.9)
feats = [torch.randn(2, 8, s, s) for s in (8, 4)]
outs = head(feats)
loss = sum(F.binary_cross_entropy_with_logits(o, torch.zeros_like(o)) for o in outs)
opt.zero_grad()
loss.backward()
opt.step()
