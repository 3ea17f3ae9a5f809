"""Adversarial training perturbs the input with `x_adv += eps * x_adv.grad.sign()` outside no_grad; x_adv is a leaf that requires grad."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallCNN(nn.Module):
    def __init__(self, n_cls=10):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ELU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(8 * 4 * 4, n_cls)

    def forward(self, x):
        return self.fc(self.conv(x).flatten(1))


def fgsm(model, x, y, eps=0.03):
    x_adv = x.clone().requires_grad_(True)
    loss = F.cross_entropy(model(x_adv), y)
    loss.backward()
    x_adv += eps * x_adv.grad.sign()  # expect: GG002
    return x_adv.clamp(0, 1).detach()


def train(model, opt, batches):
    for x, y in batches:
        x_adv = fgsm(model, x, y)
        opt.zero_grad()
        loss = 0.5 * F.cross_entropy(model(x), y) + 0.5 * F.cross_entropy(model(x_adv), y)
        loss.backward()
        opt.step()


torch.manual_seed(0)
model = SmallCNN()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
train(model, opt, [(torch.rand(4, 1, 8, 8), torch.randint(0, 10, (4,))) for _ in range(2)])
