"""Task heads grouped as nested classes of a namespace class, trained together on a shared encoder."""
import torch
from torch import nn


class Heads:
    class Classifier(nn.Module):
        def __init__(self, dim, n):
            super().__init__()
            self.fc = nn.Linear(dim, n)

        def forward(self, x):
            h = torch.relu(self.fc(x))
            h += 1.0  # expect: GG001
            return h

    class Regressor(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.fc = nn.Linear(dim, 1)

        def forward(self, x):
            out = self.fc(x)
            out += 0.5
            return out.squeeze(-1)


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
cls_head, reg_head = Heads.Classifier(16, 3), Heads.Regressor(16)
params = [*encoder.parameters(), *cls_head.parameters(), *reg_head.parameters()]
opt = torch.optim.Adam(params, lr=1e-3)
x, y, t = torch.randn(4, 8), torch.randint(0, 3, (4,)), torch.randn(4)
z = encoder(x)
loss = nn.functional.cross_entropy(cls_head(z), y) + nn.functional.mse_loss(reg_head(z), t)
opt.zero_grad()
loss.backward()
opt.step()
