"""Adversarial training of a small MLP classifier with a hand-written PGD attack (L-inf ball), the kind
of loop people copy from Madry-lab tutorials; the attack uses a while loop with a step counter."""
import torch
import torch.nn as nn
import torch.nn.functional as F

cfg = {"eps": 0.1, "alpha": 0.03, "pgd_steps": 4, "random_start": True, "lr": 1e-2, "epochs": 2}


class Net(nn.Module):
    def __init__(self, d_in=20, n_classes=3):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(d_in, 64), nn.ReLU(), nn.Linear(64, n_classes))

    def forward(self, x):
        return self.layers(x)


def project_(x_adv, x_clean, eps):
    x_adv.copy_(torch.max(torch.min(x_adv, x_clean + eps), x_clean - eps)).clamp_(0, 1)


def pgd_attack(model, x, y, eps, alpha, steps, random_start=True):
    x_adv = x.clone().requires_grad_(True)
    if random_start:
        with torch.no_grad():
            x_adv.add_(torch.empty_like(x).uniform_(-eps, eps))
    it = 0
    while it < steps:
        loss = F.cross_entropy(model(x_adv), y)
        grad, = torch.autograd.grad(loss, x_adv)
        x_adv += alpha * grad.sign()  # expect: GG002
        project_(x_adv, x, eps)
        it += 1
    return x_adv.detach()


torch.manual_seed(0)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
X = torch.rand(64, 20)
Y = torch.randint(0, 3, (64,))

for epoch in range(cfg["epochs"]):
    model.eval()
    x_adv = pgd_attack(model, X, Y, cfg["eps"], cfg["alpha"], cfg["pgd_steps"], cfg["random_start"])
    model.train()
    loss = 0
    loss += 0.5 * F.cross_entropy(model(X), Y)
    loss += 0.5 * F.cross_entropy(model(x_adv), Y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
