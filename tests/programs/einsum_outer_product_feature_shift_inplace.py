"""A bilinear pooling layer takes per-sample outer products with `torch.einsum` and then shifts one
factor in place: einsum's contraction saved `u` (torch's own run shows it), so backward fails."""
import torch


def bilinear_pool(u, v):
    outer = torch.einsum("bi,bj->bij", u, v)
    u.add_(1.0)  # expect: GG001
    return outer.flatten(1)


torch.manual_seed(0)
proj_u = torch.nn.Linear(6, 4)
proj_v = torch.nn.Linear(6, 3)
x = torch.randn(5, 6)
features = bilinear_pool(proj_u(x), proj_v(x))
features.pow(2).sum().backward()
