"""Paired flags sharing a dest (--fused / --no-fused), the flag read in the model: argparse's default is the first action's (False), so the unfused in-place path runs by default."""
import argparse
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, fused):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.fused = fused

    def forward(self, x):
        y = torch.sigmoid(self.fc(x))
        if not self.fused:
            y.mul_(2)  # expect: GG001
        else:
            y = y * 2
        return y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fused", dest="fused", action="store_true", help="use the fused path")
    parser.add_argument("--no-fused", dest="fused", action="store_false", help="use the unfused path")
    args = parser.parse_args()
    model = Block(args.fused)
    model(torch.randn(2, 4)).sum().backward()
    print("ok")


if __name__ == "__main__":
    main()
