"""A factory returns a layer with its width, read from a config at run time, and two layers are
built by it. The second layer runs on inputs that require grad, then its weight is rescaled in place:
its `addmm` saved that weight, so `backward()` raises."""

import json

import torch
import torch.nn as nn


def read_width(config_text):
    return json.loads(config_text)["width"]


def make_layer(width):
    return nn.Linear(8, width), width


def main():
    width = read_width('{"width": 8}')
    left, _ = make_layer(width)
    right, _ = make_layer(width)
    x = torch.randn(4, 8, requires_grad=True)
    score = right(x).sum()
    with torch.no_grad():
        right.weight.mul_(0.5)  # expect: GG001
    score.backward()


if __name__ == "__main__":
    main()
