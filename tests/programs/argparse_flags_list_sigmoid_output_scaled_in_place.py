"""A linear layer trained with options parsed from a fixed argument list: the activation and an in-place scaling come from flags."""
import argparse
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--act", default="softsign")
parser.add_argument("--inplace-scale", action="store_true")
parser.add_argument("--lr", type=float, default="0.1")


def main(args):
    net = nn.Linear(4, 4)
    h = net(torch.randn(2, 4))
    if args.act == "sigmoid":
        g = torch.sigmoid(h)
    else:
        g = torch.nn.functional.softsign(h)
    if args.inplace_scale:
        g.mul_(2.0)  # expect: GG001
    g.sum().backward()
    torch.optim.SGD(net.parameters(), lr=args.lr).step()


if __name__ == "__main__":
    main(parser.parse_args(["--inplace-scale", "--act", "sigmoid"]))
