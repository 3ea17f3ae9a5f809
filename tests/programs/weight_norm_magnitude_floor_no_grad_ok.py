"""Classifier built with nn.utils.parametrizations.weight_norm: a helper floors the magnitude parametrization (original0) in place after the step, under torch.no_grad() as a parameter update must be."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import weight_norm

torch.manual_seed(0)


class WNClassifier(nn.Module):
    def __init__(self, d_in=20, d_hidden=64, n_classes=5, p_drop=0.1):
        super().__init__()
        self.fc1 = weight_norm(nn.Linear(d_in, d_hidden))
        self.fc2 = weight_norm(nn.Linear(d_hidden, d_hidden))
        self.head = nn.Linear(d_hidden, n_classes)
        self.drop = nn.Dropout(p_drop)

    def forward(self, x):
        h = self.drop(F.gelu(self.fc1(x)))
        h = self.drop(F.gelu(self.fc2(h)))
        return self.head(h)


@torch.no_grad()
def floor_magnitudes(model, eps=1e-2):
    """Dead units show up as g -> 0; keep every magnitude above eps."""
    n_fixed = 0
    for module in model.modules():
        if not parametrize.is_parametrized(module, "weight"):
            continue
        g = module.parametrizations.weight.original0
        n_fixed += int((g < eps).sum())
        g.clamp_(min=eps)
    return n_fixed


def make_batch(n=32, d_in=20, n_classes=5):
    x = torch.randn(n, d_in)
    y = (x[:, :n_classes].argmax(dim=1) + (x[:, -1] > 1).long()) % n_classes
    return x, y


def train(model, steps=5, lr=1e-2):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    log = {"loss": [], "fixed": []}
    for step in range(steps):
        x, y = make_batch()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        log["fixed"].append(floor_magnitudes(model))
        log["loss"].append(loss.item())
    return log


if __name__ == "__main__":
    model = WNClassifier()
    log = train(model)
    print("losses", log["loss"], "fixed", log["fixed"])
