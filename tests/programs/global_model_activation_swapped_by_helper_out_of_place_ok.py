"""A script toggles the activation of a global model through a helper (`use_act(False)`, called
again after an experiment reset it). The ReLU it puts back works out of place, leaving the
sigmoid's saved output as it was: it trains."""
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)
        self.act = nn.Identity()

    def forward(self, x):
        return self.act(torch.sigmoid(self.proj(x)))


MODEL = Gate()


def use_act(flag):
    MODEL.act = nn.ReLU(inplace=flag)


def main():
    torch.manual_seed(0)
    use_act(False)
    MODEL.act = nn.Identity()
    use_act(False)
    out = MODEL(torch.randn(4, 6))
    out.sum().backward()


if __name__ == "__main__":
    main()
