"""A feature extractor keeps its sigmoid gates in a cache dict its caller passes in, then sharpens
them in place; the caller backwards through the cached gates: sigmoid saved its output."""
import sys

import torch
import torch.nn as nn

encoder = nn.Linear(6, 6)


def extract(x, cache):
    gates = torch.sigmoid(encoder(x))
    cache["gates"] = gates
    gates.mul_(2.0)  # expect: GG001
    return gates.detach()


def main(mode="extract"):
    cache = {}
    globals()[mode](torch.randn(3, 6), cache)
    cache["gates"].sum().backward()


if __name__ == "__main__":
    main(*sys.argv[1:])
