"""Recursion cost: mutually recursive helpers of a recursive model, depth read at run time; a bug in the leaf case."""
import sys
import torch
import torch.nn as nn

lin = nn.Linear(4, 4)


def fa(x, n):
    if n <= 0:
        h = torch.sigmoid(lin(x))
        h.mul_(2)  # expect: GG001
        return h
    y = fb(x, n - 1) + fb(x * 2, n - 1) + fb(torch.sigmoid(x), n - 1)
    return fa(y, n - 1) if n % 2 else y


def fb(x, n):
    if n <= 0:
        return torch.sigmoid(lin(x))
    h = x
    for i in range(3):
        h = h + fc(h, n - 1) * i
    return h + fa(h, n - 1)


def fc(x, n):
    if n <= 0:
        return lin(x).relu()
    return fa(x, n - 1) * fb(x, n - 1) + fc(x, n - 2)


k = len(sys.argv) + 2
fa(torch.randn(2, 4), k).sum().backward()
print("ok")
