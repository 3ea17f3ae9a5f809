"""An initialiser applied with `model.apply` resets every Linear's weights under no_grad; the
training script then rescales the last layer's weight in place outside it, on a leaf that
requires grad: torch refuses the in-place change at once."""
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


@torch.no_grad()
def init_weights(module):
    if isinstance(module, nn.Linear):
        module.weight.normal_(0.0, 0.02)
        module.bias.zero_()


def main():
    backbone = Backbone()
    backbone.apply(init_weights)
    backbone.fc3.weight.mul_(0.5)  # expect: GG002
    out = backbone(torch.randn(5, 4))
    out.sum().backward()


main()
