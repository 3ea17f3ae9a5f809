"""Feature pipeline held by a list subclass with its own __init__ (calling super().__init__ with
the steps); the clipping step clamps the tanh features in place."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Pipeline(list):
    def __init__(self, steps, name="pipeline"):
        super().__init__(steps)
        self.name = name

    def run(self, x):
        for step in self:
            x = step(x)
        return x


def clip_(x):
    return x.clamp_(-0.8, 0.8)  # expect: GG001


def center(x):
    return x - x.mean(dim=0, keepdim=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    enc = nn.Linear(6, 8)
    head = nn.Linear(8, 2)
    pipeline = Pipeline([clip_, center], name="post")
    x, y = torch.randn(10, 6), torch.randint(0, 2, (10,))
    feats = torch.tanh(enc(x))
    feats = pipeline.run(feats)
    loss = F.cross_entropy(head(feats), y)
    loss.backward()
    print(pipeline.name, loss.item())
