"""A self-supervised trainer keeps the encoder's features on `self`, detached, for an auxiliary head;
its main step keeps the graph and steps the optimizer over the encoder: nothing that outlives the
step reaches the retained graph, and the auxiliary backward stops at the cached features."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, dim):
        self.encoder = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, 32))
        self.head = nn.Linear(32, 10)
        self.aux_head = nn.Linear(32, 1)
        self.opt = torch.optim.Adam(list(self.encoder.parameters()) + list(self.head.parameters()), lr=1e-3)
        self.aux_opt = torch.optim.Adam(self.aux_head.parameters(), lr=1e-3)
        self.features = None

    def main_step(self, x, y):
        features = self.encoder(x)
        self.features = features.detach()
        loss = F.cross_entropy(self.head(features), y)
        self.opt.zero_grad()
        loss.backward(retain_graph=True)
        self.opt.step()
        return loss.item()

    def aux_step(self, target):
        aux_loss = F.mse_loss(self.aux_head(self.features).squeeze(-1), target)
        self.aux_opt.zero_grad()
        aux_loss.backward()
        self.aux_opt.step()


parser = argparse.ArgumentParser()
parser.add_argument("--step", default="main_step")
args = parser.parse_args()
trainer = Trainer(16)
x, y = torch.randn(8, 16), torch.randint(0, 10, (8,))
getattr(trainer, args.step)(x, y)
trainer.aux_step(torch.randn(8))
