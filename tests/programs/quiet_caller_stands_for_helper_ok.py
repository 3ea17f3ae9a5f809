"""A model builds its block without the in-place activation the block's default has: the block's
own analysis (with its defaults) would warn, its caller's (which builds it otherwise) must not."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, inplace=True):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.act(torch.sigmoid(self.fc(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(inplace=False)

    def forward(self, x):
        return self.block(x)


net = Net()
net(torch.randn(2, 4)).sum().backward()
print("ok")
