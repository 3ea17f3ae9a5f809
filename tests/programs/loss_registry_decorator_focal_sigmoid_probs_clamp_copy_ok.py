"""The same registry of losses; the focal loss clamps a copy of the sigmoid probabilities
(`clamp`, not `clamp_`), so the output `sigmoid` saved is left alone."""
import torch
import torch.nn as nn

LOSSES = {}


def register_loss(name):
    def add(fn):
        LOSSES[name] = fn
        return fn
    return add


@register_loss("bce")
def bce_loss(logits, targets):
    return nn.functional.binary_cross_entropy_with_logits(logits, targets)


@register_loss("focal")
def focal_loss(logits, targets, gamma=2.0, eps=1e-6):
    probs = torch.sigmoid(logits).clamp(eps, 1 - eps)
    pt = torch.where(targets > 0, probs, 1 - probs)
    return (-(1 - pt) ** gamma * pt.log()).mean()


config = {"loss": "focal", "lr": 0.1}
model = nn.Linear(10, 3)
criterion = LOSSES[config["loss"]]
optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
x, y = torch.randn(8, 10), (torch.rand(8, 3) > 0.5).float()
loss = criterion(model(x), y)
optimizer.zero_grad()
loss.backward()
optimizer.step()
