"""Two towers from one factory, their width read from a config at run time. The second tower ran
on inputs that require grad, then the first tower's last weight is rescaled in place: each tower
has weights of its own, and the first never ran, so `backward()` runs."""

import json

import torch
import torch.nn as nn


def read_width(config_text):
    return json.loads(config_text)["width"]


def make_tower(width):
    return nn.Sequential(nn.Linear(8, 8), nn.Sigmoid(), nn.Linear(8, 1))


def main():
    width = read_width('{"width": 8}')
    left = make_tower(width)
    right = make_tower(width)
    x = torch.randn(4, 8, requires_grad=True)
    score = right(x).sum()
    with torch.no_grad():
        left[2].weight.mul_(0.5)
    score.backward()


if __name__ == "__main__":
    main()
