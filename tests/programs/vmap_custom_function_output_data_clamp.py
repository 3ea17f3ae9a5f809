"""Poisson-rate regression with a vmap-compatible custom Softplus (autograd.Function with
generate_vmap_rule), applied per sample through torch.vmap, with the predicted rates clipped for stability."""
import torch
import torch.nn as nn


class StableSoftplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.where(x > 20.0, x, torch.log1p(torch.exp(x)))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        # sigmoid(x) == 1 - exp(-softplus(x))
        return grad_out * -torch.expm1(-out)


class RateModel(nn.Module):
    def __init__(self, n_in, hidden=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def rate_one(self, x):
        # x: [n_in] -> scalar rate; written per sample and batched with vmap
        return StableSoftplus.apply(self.body(x).squeeze(-1))


def poisson_nll(rate, counts):
    return (rate - counts * torch.log(rate + 1e-8)).mean()


def run(model, X, counts, max_rate, use_data_clip):
    rates = torch.vmap(model.rate_one)(X)
    if use_data_clip:
        rates.data.clamp_(max=max_rate)  # expect: GG004
    else:
        rates = rates.clamp(max=max_rate)
    loss = poisson_nll(rates, counts)
    model.zero_grad()
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters()}


torch.manual_seed(0)
X = torch.randn(32, 6) * 3.0
counts = torch.poisson(torch.full((32,), 2.0))
model = RateModel(6)
with torch.no_grad():
    model.body[2].bias.fill_(1.5)

max_rate = 2.0
ref_grads = run(model, X, counts, max_rate, use_data_clip=False)
grads = run(model, X, counts, max_rate, use_data_clip=True)

with torch.no_grad():
    n_clipped = (torch.vmap(model.rate_one)(X) > max_rate).sum().item()
print("clipped rates:", n_clipped)
for name in grads:
    print(name, (grads[name] - ref_grads[name]).abs().max().item())
assert n_clipped > 0
assert not torch.allclose(grads["body.2.weight"], ref_grads["body.2.weight"])
