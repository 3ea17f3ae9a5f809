"""A detector adds a positional embedding in place onto torchvision MobileNetV2's feature map: its last layer ends in ReLU6(inplace=True) (hardtanh), whose backward does not need that output, so training runs cleanly."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models import mobilenet_v2


class MobileDetector(nn.Module):
    def __init__(self, n_cls=3):
        super().__init__()
        self.backbone = mobilenet_v2(weights=None).features
        self.pos = nn.Parameter(torch.zeros(1, 1280, 1, 1))
        self.head = nn.Conv2d(1280, n_cls, 1)

    def forward(self, images):
        feat = self.backbone(images)
        feat += self.pos
        return self.head(feat)


torch.manual_seed(0)
model = MobileDetector()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
images = torch.randn(2, 3, 32, 32)
target = torch.randint(0, 3, (2, 1, 1))
loss = F.cross_entropy(model(images), target)
opt.zero_grad()
loss.backward()
opt.step()
