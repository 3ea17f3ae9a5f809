"""A training generator, chosen by a command-line option, steps the optimizer after each batch and
yields the model's output for the caller's consistency loss; that backward runs through the yielded
output's graph into the weights the step changed."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)


def fit_batches(batches):
    for x, y in batches:
        out = model(x)
        loss = F.mse_loss(out, y)
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()  # expect: GG001
        yield out


parser = argparse.ArgumentParser()
parser.add_argument("--loop", default="fit_batches")
args = parser.parse_args()
batches = [(torch.randn(16, 8), torch.randn(16, 1)) for _ in range(2)]
for out in globals()[args.loop](batches):
    consistency = out.var()
    consistency.backward()
