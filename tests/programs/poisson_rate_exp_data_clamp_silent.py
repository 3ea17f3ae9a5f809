"""A Poisson regression caps its exp() rate through .data.clamp_(max=...) to avoid overflow; exp saved that output, so backward silently uses the capped rate as exp's derivative."""
import copy
import math

import torch
import torch.nn as nn


class RateModel(nn.Module):
    def __init__(self, d_in=5, hidden=16, mean_count=40.0, max_rate=100.0):
        super().__init__()
        self.max_rate = max_rate
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.Softplus(), nn.Linear(hidden, 1))
        nn.init.constant_(self.net[-1].bias, math.log(mean_count))

    def forward(self, x):
        rate = torch.exp(self.net(x))
        rate.data.clamp_(max=self.max_rate)  # expect: GG004
        return rate


class RateModelRef(RateModel):
    def forward(self, x):
        return torch.exp(self.net(x)).clamp(max=self.max_rate)


def poisson_nll(rate, counts):
    return (rate - counts * torch.log(rate + 1e-8)).mean()


torch.manual_seed(0)
model = RateModel()
reference = RateModelRef()
reference.load_state_dict(copy.deepcopy(model.state_dict()))
x = torch.randn(32, 5) * 6
counts = torch.poisson(torch.full((32, 1), 40.0))

loss = poisson_nll(model(x), counts)
loss.backward()
ref_loss = poisson_nll(reference(x), counts)
ref_loss.backward()
assert torch.allclose(loss, ref_loss), "forward values differ"
assert not torch.allclose(model.net[0].weight.grad, reference.net[0].weight.grad), "gradient unexpectedly right"
