"""Adversarial training draws its batches with `next(stream)` from a generator of synthetic data; the batch is made to require grad for the attack, and the perturbed batch is a new tensor, detached from the attack's graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def synthetic_batches(centers, batch_size, noise=0.5):
    n_cls, dim = centers.shape
    while True:
        y = torch.randint(0, n_cls, (batch_size,))
        x = centers[y] + noise * torch.randn(batch_size, dim)
        yield x, y


class Classifier(nn.Module):
    def __init__(self, dim=8, n_cls=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, n_cls))

    def forward(self, x):
        return self.net(x)


torch.manual_seed(0)
model = Classifier()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
stream = synthetic_batches(torch.randn(3, 8), batch_size=16)
eps = 0.1
for step in range(3):
    x, y = next(stream)
    x.requires_grad_(True)
    grad, = torch.autograd.grad(F.cross_entropy(model(x), y), x)
    x = (x + eps * grad.sign()).detach()
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
