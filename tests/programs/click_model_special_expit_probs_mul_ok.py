"""The same click-through model discounts out of place: `probs * discount` leaves the output that
`torch.special.expit` saved for backward unchanged."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ClickModel(nn.Module):
    def __init__(self, n_features=10):
        super().__init__()
        self.score = nn.Linear(n_features, 1)

    def forward(self, features):
        return self.score(features).squeeze(-1)


def position_discount(n):
    return 1.0 / torch.log2(torch.arange(n, dtype=torch.float32) + 2.0)


torch.manual_seed(0)
model = ClickModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
features = torch.randn(12, 10)
clicks = (torch.rand(12) > 0.7).float()
probs = torch.special.expit(model(features))
probs = probs * position_discount(12)
loss = F.binary_cross_entropy(probs, clicks)
loss.backward()
optimizer.step()
