"""A probe head freezes every Linear of its backbone with `model.apply`, then rescales the last
layer's weight in place: frozen, the weight no longer requires grad, so the in-place change is
allowed and training the head runs."""
import torch
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.fc1 = nn.Linear(4, width)
        self.fc2 = nn.Linear(width, width)
        self.fc3 = nn.Linear(width, width)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def freeze(module):
    if isinstance(module, nn.Linear):
        module.weight.requires_grad_(False)
        module.bias.requires_grad_(False)


def main():
    backbone = Backbone()
    backbone.apply(freeze)
    backbone.fc3.weight.mul_(0.5)
    head = nn.Linear(8, 2)
    out = head(backbone(torch.randn(5, 4)))
    out.sum().backward()


main()
