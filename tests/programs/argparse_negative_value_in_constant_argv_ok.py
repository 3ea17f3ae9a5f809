"""Parse_args with a constant list giving a negative value ("-1" is --shift's value in argparse); the in-place branch runs only for a non-negative shift: never here."""
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--shift", type=float, default=0.0)
args = p.parse_args(["--shift", "-1"])

x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
if args.shift >= 0:
    y.add_(args.shift)
y.sum().backward()
print("ok", args.shift)
