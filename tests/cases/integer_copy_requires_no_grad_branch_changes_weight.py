"""An integer copy of a weight never requires grad, so the test on it holds and the branch runs:
it changes the weight itself, a leaf that requires grad, in place."""
import torch

weight = torch.randn(3, requires_grad=True)
buckets = weight.long()
if not buckets.requires_grad:
    weight.add_(1.0)  # expect: GG002
(weight * 2).sum().backward()
