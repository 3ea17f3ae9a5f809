"""A forward pre-hook, made by a factory (`input_scaler(0.5)`), rescales the input of the second
block in place: that input is the first block's `Tanh` output, which `Tanh` saved for backward,
so `backward()` raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_block(d_in, d_out):
    return nn.Sequential(nn.Linear(d_in, d_out), nn.Tanh())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([make_block(12, 24), make_block(24, 24)])
        self.head = nn.Linear(24, 1)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.head(x)


def input_scaler(scale):
    def hook(module, args):
        args[0].mul_(scale)  # expect: GG001
    return hook


torch.manual_seed(0)
net = Net()
net.blocks[1].register_forward_pre_hook(input_scaler(0.5))
opt = torch.optim.SGD(net.parameters(), lr=1e-2)


def batches(n):
    for _ in range(n):
        x = torch.randn(8, 12)
        yield x, x.sum(dim=1, keepdim=True)


for i, (x, y) in enumerate(batches(3)):
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()
