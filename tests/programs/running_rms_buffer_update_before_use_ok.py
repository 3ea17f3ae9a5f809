"""RunningRMSNorm updates its running-rms buffer in place first and divides by it afterwards: the division saves the buffer at its new version, so backward is fine."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RunningRMSNorm(nn.Module):
    def __init__(self, dim, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_rms", torch.ones(dim))

    def forward(self, x):
        if self.training:
            batch_rms = x.detach().pow(2).mean(dim=0).add(self.eps).sqrt()
            self.running_rms.mul_(1 - self.momentum).add_(self.momentum * batch_rms)
        return x / self.running_rms


class Regressor(nn.Module):
    def __init__(self, d_in=6, hidden=16):
        super().__init__()
        self.inp = nn.Linear(d_in, hidden)
        self.norm = RunningRMSNorm(hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.out(F.softplus(self.norm(self.inp(x))))


torch.manual_seed(0)
model = Regressor()
opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for epoch in range(3):
    x, y = torch.randn(32, 6), torch.randn(32, 1)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
model.eval()
print(model(torch.randn(2, 6)))
