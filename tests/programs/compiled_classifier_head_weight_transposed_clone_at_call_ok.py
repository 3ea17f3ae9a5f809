"""A classifier head compiled with `@torch.compile` (inductor) scores a clone of 2-D features with `features @ weight.T`; clipping the features in place for a feature log before the backward pass leaves the saved clone unchanged: backward runs cleanly."""
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

logits = head(features.clone(), weight, bias)
features.clamp_(-3.0, 3.0)
feature_log.append(features)
loss = F.cross_entropy(logits, labels)
loss.backward()
