"""Each head's class probabilities are computed with `map` and a lambda; they are clamped out of
place, so backward runs."""
import torch
import torch.nn as nn


class MultiHead(nn.Module):
    def __init__(self, d=8, k=3, n=2):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(d, k) for _ in range(n)])

    def forward(self, x):
        probs = list(map(lambda head: head(x).softmax(-1), self.heads))
        probs = [p.clamp(min=1e-6) for p in probs]
        return torch.stack(probs).mean(0)


model = MultiHead()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))
loss = -model(x).gather(1, y[:, None]).log().mean()
opt.zero_grad()
loss.backward()
opt.step()
