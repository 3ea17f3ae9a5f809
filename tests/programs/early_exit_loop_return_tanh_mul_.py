"""An early-exit network returns from inside its layer loop once the configured exit is reached;
the trainer rescales the returned tanh features in place, and tanh saved its output for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class EarlyExitNet(nn.Module):
    def __init__(self, d=8, depth=4, exit_at=1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(depth)])
        self.exit_at = exit_at

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = torch.tanh(layer(x))
            if i == self.exit_at:
                return x
        return x


net = EarlyExitNet()
head = nn.Linear(8, 2)
opt = torch.optim.SGD([*net.parameters(), *head.parameters()], lr=0.1)
x, y = torch.randn(5, 8), torch.randint(0, 2, (5,))
feats = net(x)
feats.mul_(0.5)  # expect: GG001
loss = F.cross_entropy(head(feats), y)
opt.zero_grad()
loss.backward()
opt.step()
