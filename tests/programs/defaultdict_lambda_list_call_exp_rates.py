"""Per-head activations gathered in a defaultdict(lambda: list()) by name; the caller later clamps a stored exp output in place."""
from collections import defaultdict
import torch
import torch.nn as nn


class TwoHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.rate = nn.Linear(6, 2)
        self.loc = nn.Linear(6, 2)

    def forward(self, x, acts):
        r = torch.exp(self.rate(x))
        m = self.loc(x)
        acts["rate"].append(r)
        acts["loc"].append(m)
        return r, m


if __name__ == "__main__":
    torch.manual_seed(0)
    net = TwoHead()
    acts = defaultdict(lambda: list())
    x = torch.randn(5, 6)
    r, m = net(x, acts)
    acts["rate"][-1].clamp_(max=5.0)  # expect: GG001
    loss = (r * m).sum()
    loss.backward()
    print(loss.item())
