"""A Siamese network with BatchNorm runs both views through the same encoder in train mode before one
backward: the second call updates the running statistics the first call saved, but the batch-norm
kernel does that without bumping their version, so backward runs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def contrastive_loss(a, b, same, margin=1.0):
    d = F.pairwise_distance(a, b)
    return (same * d.pow(2) + (1 - same) * F.relu(margin - d).pow(2)).mean()


torch.manual_seed(0)
encoder = Encoder()
opt = torch.optim.SGD(encoder.parameters(), lr=0.01, momentum=0.9)
for _ in range(2):
    x1, x2 = torch.randn(4, 3, 16, 16), torch.randn(4, 3, 16, 16)
    same = torch.randint(0, 2, (4,)).float()
    loss = contrastive_loss(encoder(x1), encoder(x2), same)
    opt.zero_grad()
    loss.backward()
    opt.step()
