"""A parser-level default set before the option is added (no default of its own): argparse uses it."""
import argparse
import torch
import torch.nn as nn


def train(args):
    lin = nn.Linear(4, 4)
    y = torch.sigmoid(lin(torch.randn(2, 4)))
    if args.inplace_norm:
        y.div_(y.sum())  # expect: GG001
    y.sum().backward()


def main():
    parser = argparse.ArgumentParser()
    parser.set_defaults(inplace_norm=True)
    parser.add_argument("--inplace-norm", action="store_true")
    parser.add_argument("--lr", type=float, default=0.1)
    train(parser.parse_args())
    print("ok")


if __name__ == "__main__":
    main()
