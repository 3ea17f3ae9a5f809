"""A retrieval head scores features with a compiled projection, then normalises the features in place for its
memory bank before the backward pass: inductor computes the weight's gradient from the normalised features."""
import torch
import torch.nn.functional as F


@torch.compile
def project(features, weight):
    return (features @ weight).relu()


features = torch.randn(32, 16)
weight = torch.randn(16, 8, requires_grad=True)
target = torch.randn(32, 8)

scores = project(features, weight)
features.div_(features.norm(dim=1, keepdim=True))
loss = F.mse_loss(scores, target)
loss.backward()
