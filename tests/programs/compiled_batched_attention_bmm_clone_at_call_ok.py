"""Batched attention scores compiled with `@torch.compile` (inductor) as `torch.bmm(queries, keys.transpose(1, 2))` on a clone of the queries; rescaling the queries in place before the backward pass leaves what the product saved unchanged: the keys' gradient equals eager's."""
import torch


def scores_eager(queries, keys):
    return torch.bmm(queries, keys.transpose(1, 2)).softmax(dim=-1)


@torch.compile
def scores(queries, keys):
    return torch.bmm(queries, keys.transpose(1, 2)).softmax(dim=-1)


torch.manual_seed(0)
queries = torch.randn(4, 6, 8)
keys = torch.randn(4, 6, 8, requires_grad=True)
values = torch.randn(4, 6, 8)
reference_queries = queries.clone()

attention = scores(queries.clone(), keys)
queries.mul_(8 ** -0.5)
loss = (attention @ values).pow(2).mean()
loss.backward()

reference_keys = keys.detach().clone().requires_grad_()
reference_loss = (scores_eager(reference_queries, reference_keys) @ values).pow(2).mean()
reference_loss.backward()
assert torch.allclose(loss, reference_loss), "forward values differ"
assert torch.allclose(keys.grad, reference_keys.grad), "gradient differs from eager"
