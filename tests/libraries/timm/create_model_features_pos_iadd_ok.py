"""The twin of create_model_features_pos_iadd.py, written out of place (`feat = feat + self.pos`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseHead(nn.Module):
    def __init__(self, n_cls=3):
        super().__init__()
        self.backbone = timm.create_model("resnet18", pretrained=False, num_classes=0)
        self.pos = nn.Parameter(torch.zeros(1, 512, 2, 2))
        self.classifier = nn.Conv2d(512, n_cls, 1)

    def forward(self, images):
        feat = self.backbone.forward_features(images)
        feat = feat + self.pos
        return self.classifier(feat)


torch.manual_seed(0)
model = DenseHead()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
images = torch.randn(2, 3, 64, 64)
target = torch.randint(0, 3, (2, 2, 2))
loss = F.cross_entropy(model(images), target)
opt.zero_grad()
loss.backward()
opt.step()
