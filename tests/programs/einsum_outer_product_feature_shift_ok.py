"""The bilinear pooling layer shifts a factor out of place before `torch.einsum`: nothing saved is
changed."""
import torch


def bilinear_pool(u, v):
    u = u + 1.0
    outer = torch.einsum("bi,bj->bij", u, v)
    return outer.flatten(1)


torch.manual_seed(0)
proj_u = torch.nn.Linear(6, 4)
proj_v = torch.nn.Linear(6, 3)
x = torch.randn(5, 6)
features = bilinear_pool(proj_u(x), proj_v(x))
features.pow(2).sum().backward()
