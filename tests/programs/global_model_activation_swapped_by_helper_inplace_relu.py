"""A script toggles the activation of a global model through a helper (`use_inplace_act(True)`,
called again after an experiment reset it). The model's activation follows a sigmoid, which saves
its output; `nn.ReLU(inplace=True)` then changes that output in place: backward raises. The second
call of the helper must put the in-place ReLU back, as the first did."""
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)
        self.act = nn.Identity()

    def forward(self, x):
        return self.act(torch.sigmoid(self.proj(x)))  # expect: GG001


MODEL = Gate()


def use_inplace_act(flag):
    MODEL.act = nn.ReLU(inplace=flag)


def main():
    torch.manual_seed(0)
    use_inplace_act(True)
    MODEL.act = nn.Identity()
    use_inplace_act(True)
    out = MODEL(torch.randn(4, 6))
    out.sum().backward()


if __name__ == "__main__":
    main()
