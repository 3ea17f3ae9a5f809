"""The same in-place normalising helper, called only from an optimizer's `@torch.no_grad()` step
(through a dispatch between two implementations): grad is off, nothing is saved, training runs."""
import torch
import torch.nn as nn


def _rms_normalise_(x, eps=1e-6):
    scale = x.norm()
    x.div_(scale + eps)
    return x


def _normalise_each_(updates, eps=1e-6):
    for u in updates:
        _rms_normalise_(u, eps)


def normalised_sgd(params, grads, lr, foreach=False):
    updates = [g.clone() for g in grads]
    func = _normalise_each_ if foreach else (lambda us, eps=1e-6: [_rms_normalise_(u, eps) for u in us])
    func(updates)
    for p, u in zip(params, updates):
        p.add_(u, alpha=-lr)


class NormalisedSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, foreach=True):
        super().__init__(params, dict(lr=lr, foreach=foreach))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            normalised_sgd(params, [p.grad for p in params], group["lr"], group["foreach"])


model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
opt = NormalisedSGD(model.parameters())
x = torch.randn(4, 8)
for _ in range(2):
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
