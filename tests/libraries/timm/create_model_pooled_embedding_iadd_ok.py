"""A metric-learning model adds a learned offset in place onto the pooled embedding of `timm.create_model("resnet18", num_classes=0)`: global average pooling does not save its output, so training runs cleanly."""
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = timm.create_model("resnet18", pretrained=False, num_classes=0)
        self.offset = nn.Parameter(torch.zeros(512))

    def forward(self, images):
        emb = self.backbone(images)
        emb += self.offset
        return F.normalize(emb, dim=1)


torch.manual_seed(0)
model = Embedder()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
anchor, positive = torch.randn(2, 3, 32, 32), torch.randn(2, 3, 32, 32)
loss = (1 - (model(anchor) * model(positive)).sum(1)).mean()
opt.zero_grad()
loss.backward()
opt.step()
