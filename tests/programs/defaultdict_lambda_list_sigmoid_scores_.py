"""Per-head score buffer kept in defaultdict(lambda: []) while scoring a batch; the stored
sigmoid scores of one head are then smoothed in place before the ranking loss."""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadScorer(nn.Module):
    def __init__(self, d=7, heads=("click", "buy")):
        super().__init__()
        self.heads = nn.ModuleDict({h: nn.Linear(d, 1) for h in heads})

    def forward(self, x):
        scores = defaultdict(lambda: [])
        for name, head in self.heads.items():
            scores[name].append(torch.sigmoid(head(x)))
        return scores


def label_smooth_(s, eps=0.1):
    s.mul_(1 - eps).add_(eps / 2)  # expect: GG001


if __name__ == "__main__":
    torch.manual_seed(0)
    model = MultiHeadScorer()
    x = torch.randn(12, 7)
    targets = torch.randint(0, 2, (12, 1)).float()
    scores = model(x)
    label_smooth_(scores["buy"][0])
    loss = sum(F.binary_cross_entropy(s[0], targets) for s in scores.values())
    loss.backward()
    print(loss.item())
