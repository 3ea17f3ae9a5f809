"""Multi-label classifier: torch.special.expit probabilities clamped in place before a hand-written BCE."""
import torch
import torch.nn as nn


class TagHead(nn.Module):
    def __init__(self, dim, n_tags):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, n_tags))

    def forward(self, feats):
        return self.proj(feats)


def bce(probs, targets):
    return -(targets * probs.log() + (1 - targets) * (1 - probs).log()).mean()


torch.manual_seed(0)
model = TagHead(20, 5)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
batches = [(torch.randn(16, 20), (torch.rand(16, 5) > 0.5).float()) for _ in range(4)]

for feats, targets in batches:
    opt.zero_grad()
    logits = model(feats)
    probs = torch.special.expit(logits)
    probs.clamp_(min=1e-6, max=1 - 1e-6)  # expect: GG001
    loss = bce(probs, targets)
    loss.backward()
    opt.step()
