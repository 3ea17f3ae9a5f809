"""A PGD attack updates and projects its perturbation in place inside torch.no_grad() and zeroes the grad between steps: allowed on the leaf."""
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


def pgd(model, x, y, eps=0.03, alpha=0.01, steps=3):
    delta = torch.empty_like(x).uniform_(-eps, eps).requires_grad_(True)
    for _ in range(steps):
        loss = F.cross_entropy(model(x + delta), y)
        loss.backward()
        with torch.no_grad():
            delta += alpha * delta.grad.sign()
            delta.clamp_(-eps, eps)
            delta.copy_((x + delta).clamp(0, 1) - x)
        delta.grad.zero_()
    return (x + delta).detach()


def train(model, opt, batches):
    for x, y in batches:
        x_adv = pgd(model, x, y)
        opt.zero_grad()
        loss = F.cross_entropy(model(x_adv), y)
        loss.backward()
        opt.step()


torch.manual_seed(0)
model = SmallCNN()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
train(model, opt, [(torch.rand(4, 1, 8, 8), torch.randint(0, 10, (4,))) for _ in range(2)])
