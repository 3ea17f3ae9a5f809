"""A scorer returns from inside its `with torch.autocast(...)` block and from inside a `try`; the
caller normalises the returned `torch.exp` scores out of place, so backward runs."""
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, 4)

    def forward(self, x):
        try:
            with torch.autocast("cpu", enabled=False):
                return torch.exp(self.fc(x))
        except RuntimeError:
            return None


scorer = Scorer()
opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
x, y = torch.randn(6, 8), torch.randint(0, 4, (6,))
scores = scorer(x)
scores = scores / scores.sum(-1, keepdim=True)
loss = -scores.gather(1, y[:, None]).log().mean()
opt.zero_grad()
loss.backward()
opt.step()
