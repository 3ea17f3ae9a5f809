"""A trainer's step, chosen by a command-line option, computes a held-out loss with grad on (for
logging only) between the backward and the optimizer step; the step changes weights that forward
saved, but only the loss's value leaves the function, so no backward ever runs through them."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Regressor:
    def __init__(self, dim):
        self.model = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, 1))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-2)
        self.history = []

    def train_step(self, x, y, x_val, y_val):
        loss = F.mse_loss(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        val_loss = F.mse_loss(self.model(x_val), y_val)
        self.opt.step()
        self.history.append(val_loss.item())
        return loss.item()


parser = argparse.ArgumentParser()
parser.add_argument("--step", default="train_step")
args = parser.parse_args()
trainer = Regressor(8)
for _ in range(3):
    getattr(trainer, args.step)(torch.randn(16, 8), torch.randn(16, 1), torch.randn(4, 8), torch.randn(4, 1))
