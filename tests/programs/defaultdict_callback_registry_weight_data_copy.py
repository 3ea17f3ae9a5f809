"""Minimal callback-driven training loop (batches come from a generator) for a small
CNN, with a weight-standardisation callback registered on the after-forward event."""
import copy
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F

CALLBACKS = defaultdict(list)


def on(event):
    def register(fn):
        CALLBACKS[event].append(fn)
        return fn
    return register


@on("after_forward")
def standardize_conv_weights(model):
    for m in model.modules():
        if isinstance(m, nn.Conv2d) and getattr(m, "ws", False):
            w = m.weight.data
            mean = w.mean(dim=(1, 2, 3), keepdim=True)
            std = w.std(dim=(1, 2, 3), keepdim=True) + 1e-5
            m.weight.data.copy_((w - mean) / std)  # expect: GG004


def fire(event, *args, enabled=True):
    if enabled:
        for fn in CALLBACKS[event]:
            fn(*args)


def batches(n_batches, batch_size=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n_batches):
        yield torch.randn(batch_size, 3, 16, 16, generator=g), torch.randint(0, 4, (batch_size,), generator=g)


def make_model():
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.GroupNorm(2, 8), nn.ReLU(),
        nn.Conv2d(8, 16, 3, padding=1), nn.GroupNorm(4, 16), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 4),
    )
    model[3].ws = True  # standardise the second conv only
    return model


def run_step(model, images, labels, callbacks=True):
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    fire("after_forward", model, enabled=callbacks)
    loss.backward()
    return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    model = make_model()
    reference = copy.deepcopy(model)
    for images, labels in batches(1):
        loss = run_step(model, images, labels, callbacks=True)
        run_step(reference, images, labels, callbacks=False)
    got = model[0].weight.grad
    expected = reference[0].weight.grad
    print("loss", loss.item(), "max grad diff", (got - expected).abs().max().item())
    assert not torch.allclose(got, expected, atol=1e-6), "first-conv gradient should be corrupted"
