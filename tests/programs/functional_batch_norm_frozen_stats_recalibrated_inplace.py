"""Fine-tuning with frozen BN statistics via F.batch_norm(training=False); stats recalibrated mid-step."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FrozenBNBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.gamma = nn.Parameter(torch.ones(dim))
        self.beta = nn.Parameter(torch.zeros(dim))
        self.register_buffer("running_mean", torch.zeros(dim))
        self.register_buffer("running_var", torch.ones(dim))

    def forward(self, x):
        h = self.fc(x)
        out = F.batch_norm(h, self.running_mean, self.running_var,
                           self.gamma, self.beta, training=False, eps=1e-5)
        return F.relu(out), h.detach()


torch.manual_seed(0)
block, head = FrozenBNBlock(16), nn.Linear(16, 3)
opt = torch.optim.Adam(list(block.parameters()) + list(head.parameters()), lr=1e-3)
momentum = 0.05

for _ in range(3):
    x, y = torch.randn(32, 16), torch.randint(0, 3, (32,))
    feats, h = block(x)
    loss = F.cross_entropy(head(feats), y)
    block.running_var.mul_(1 - momentum).add_(momentum * h.var(dim=0))  # expect: GG001
    opt.zero_grad()
    loss.backward()
    opt.step()
