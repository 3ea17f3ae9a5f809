"""An embedding head rescales its tanh features to unit norm with one of two helpers, picked from
an environment flag that saves memory with an in-place divide. The flag is on in this run:
`div_` changes the output of `torch.tanh`, which tanh saved for backward, so backward raises."""
import os

import torch
import torch.nn as nn


def _unit_norm_(features):
    features.div_(features.norm(dim=-1, keepdim=True))  # expect: GG001
    return features


def _unit_norm(features):
    return features / features.norm(dim=-1, keepdim=True)


class EmbeddingHead(nn.Module):
    def __init__(self, dim, out_dim, low_memory):
        super().__init__()
        self.proj = nn.Linear(dim, out_dim)
        self.low_memory = low_memory

    def forward(self, x):
        features = torch.tanh(self.proj(x))
        normalise = _unit_norm_ if self.low_memory else _unit_norm
        return normalise(features)


head = EmbeddingHead(32, 16, low_memory=os.environ.get("LOW_MEMORY", "1") == "1")
anchor, positive = head(torch.randn(8, 32)), head(torch.randn(8, 32))
loss = (1 - (anchor * positive).sum(dim=-1)).mean()
loss.backward()
