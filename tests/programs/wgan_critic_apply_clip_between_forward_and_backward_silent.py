"""WGAN weight clipping written as a function given to `critic.apply`, called between the critic's
forward and its backward: the second and third `Linear` saved their weights for backward (their
inputs require grad), and clipping through `.data` changes them with no error."""
import copy

import torch
import torch.nn as nn


def clip_weights(module, bound=0.01):
    if isinstance(module, nn.Linear):
        module.weight.data.clamp_(-bound, bound)  # expect: GG004


torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(4, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
reference = copy.deepcopy(critic)
real, fake = torch.randn(16, 4) + 1.0, torch.randn(16, 4)

loss = critic(fake).mean() - critic(real).mean()
critic.apply(clip_weights)
loss.backward()

ref_loss = reference(fake).mean() - reference(real).mean()
ref_loss.backward()
assert not torch.allclose(critic[2].weight.grad, reference[2].weight.grad), "gradient unexpectedly right"
