"""The squeeze-excitation weights are applied in place to the BatchNorm output before the final ReLU: BatchNorm saved its input, mean() saves nothing, so `out *= self.se(out)` is safe."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SqueezeExcite(nn.Module):
    def __init__(self, ch, reduction=4):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(nn.Conv2d(ch, ch // reduction, 1), nn.SiLU(), nn.Conv2d(ch // reduction, ch, 1), nn.Sigmoid())

    def forward(self, x):
        return self.fc(self.pool(x))


class SEBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(ch, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch)
        self.conv2, self.bn2 = nn.Conv2d(ch, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch)
        self.se = SqueezeExcite(ch)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.bn2(self.conv2(out))
        out *= self.se(out)
        out += x
        return F.relu(out, inplace=True)


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), SEBlock(8), SEBlock(8), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
for step in range(2):
    images, labels = torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))
    loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
