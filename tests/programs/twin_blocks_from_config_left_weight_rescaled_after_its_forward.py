"""Two blocks built from one config in a model's `__init__`. `step` rescales the left block's
weight in place after the left block ran on inputs that require grad: its `addmm` saved that
weight, so `backward()` raises."""

from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Config:
    width: int = 8


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.width, config.width)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        return self.gate(self.proj(x))


class Twin(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.left = Block(config)
        self.right = Block(config)

    def step(self, x):
        score = self.left(x).sum()
        with torch.no_grad():
            self.left.proj.weight.mul_(0.5)  # expect: GG001
        score.backward()


def main():
    model = Twin(Config())
    model.step(torch.randn(4, 8, requires_grad=True))


if __name__ == "__main__":
    main()
