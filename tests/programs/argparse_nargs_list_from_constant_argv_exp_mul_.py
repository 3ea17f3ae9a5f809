"""An nargs="+" option read from a constant list, its truth tested."""
import argparse
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--milestones", type=int, nargs="*", default=[])
args = parser.parse_args(["--milestones", "0"])

lin = nn.Linear(4, 4)
y = torch.exp(lin(torch.randn(2, 4)))
if args.milestones:
    y.mul_(0.5)  # expect: GG001 ([0] is a non-empty list)
y.sum().backward()
print("ok")
