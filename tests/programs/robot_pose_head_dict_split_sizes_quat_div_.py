"""A robot policy splits its action head into a dict of position, quaternion and gripper parts with split(sizes) and normalizes the quaternion in place: a SplitWithSizes view changed in place."""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class PoseHead(nn.Module):
    SIZES = OrderedDict(pos=3, quat=4, grip=1)

    def __init__(self, dim):
        super().__init__()
        self.out = nn.Linear(dim, sum(self.SIZES.values()))

    def forward(self, h):
        parts = dict(zip(self.SIZES, self.out(h).split(list(self.SIZES.values()), dim=-1)))
        parts["quat"].div_(parts["quat"].norm(dim=-1, keepdim=True) + 1e-8)  # expect: GG003
        parts["grip"] = torch.sigmoid(parts["grip"])
        return parts


class BCPolicy(nn.Module):
    def __init__(self, obs_dim=10, dim=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, dim), nn.LayerNorm(dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU())
        self.head = PoseHead(dim)

    def forward(self, obs):
        return self.head(self.encoder(obs))


def bc_loss(pred, target):
    losses = {
        "pos": F.mse_loss(pred["pos"], target["pos"]),
        "quat": (1 - (pred["quat"] * target["quat"]).sum(-1).abs()).mean(),
        "grip": F.binary_cross_entropy(pred["grip"], target["grip"]),
    }
    return sum(losses.values())


torch.manual_seed(0)
policy = BCPolicy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
obs = torch.randn(16, 10)
target = {"pos": torch.randn(16, 3), "quat": F.normalize(torch.randn(16, 4), dim=-1), "grip": torch.randint(0, 2, (16, 1)).float()}
loss = bc_loss(policy(obs), target)
opt.zero_grad()
loss.backward()
opt.step()
