"""A classifier head compiled with `@torch.compile` (inductor) scores 2-D features with `features @ weight.T`, which saves the features for the weight's gradient; clipping the features in place for a feature log before the backward pass raises under inductor as in eager mode: with the weight transposed in the product, inductor's compiled backward checks the saved features."""
import torch
import torch.nn.functional as F


@torch.compile
def head(features, weight, bias):
    return features @ weight.T + bias


torch.manual_seed(0)
features = torch.randn(32, 16) * 2.0
weight = torch.randn(10, 16, requires_grad=True)
bias = torch.zeros(10, requires_grad=True)
labels = torch.randint(0, 10, (32,))
feature_log = []

logits = head(features, weight, bias)
features.clamp_(-3.0, 3.0)  # expect: GG001
feature_log.append(features)
loss = F.cross_entropy(logits, labels)
loss.backward()
