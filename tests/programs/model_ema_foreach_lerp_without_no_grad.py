"""A timm-style model EMA updates its copy with `torch._foreach_lerp_` but forgets `no_grad`: the
copy's parameters (a deepcopy) are leaves that require grad, so the in-place write raises."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelEma:
    def __init__(self, model, decay=0.999):
        self.module = copy.deepcopy(model)
        self.module.eval()
        self.decay = decay

    def update(self, model):
        ema_params = list(self.module.parameters())
        model_params = list(model.parameters())
        torch._foreach_lerp_(ema_params, model_params, weight=1.0 - self.decay)  # expect: GG002


def build_model():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4),
    )


torch.manual_seed(0)
model = build_model()
ema = ModelEma(model, decay=0.99)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    x = torch.randn(4, 3, 8, 8)
    y = torch.randint(0, 4, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema.update(model)
