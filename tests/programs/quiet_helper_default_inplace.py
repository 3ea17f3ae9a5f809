"""The block keeps its in-place default: sigmoid saves its output, ReLU(inplace=True) changes it."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, inplace=True):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.act(torch.sigmoid(self.fc(x)))  # expect: GG001


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.block(x))


net = Net()
net(torch.randn(2, 4)).sum().backward()
