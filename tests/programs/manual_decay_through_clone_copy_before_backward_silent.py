"""Manual decoupled weight decay applied between forward and backward by shrinking a clone of each weight and copying it back through .data, silently changing saved weights."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F


def decay_weights(model, wd=0.2):
    for p in model.parameters():
        if p.dim() < 2:
            continue
        shrunk = p.data.clone()
        shrunk.mul_(1.0 - wd)
        p.data.copy_(shrunk)  # expect: GG004


def weight_norms(model):
    """The Frobenius norm of every matrix parameter."""
    return [p.detach().norm().item() for p in model.parameters() if p.dim() >= 2]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 2))
    x, y = torch.randn(8, 6), torch.randn(8, 2)
    ref = copy.deepcopy(model)
    F.mse_loss(ref(x), y).backward()
    loss = F.mse_loss(model(x), y)
    decay_weights(model)
    print("norms after decay", weight_norms(model))
    loss.backward()
    wrong = not torch.allclose(model[0].weight.grad, ref[0].weight.grad, atol=1e-6)
    assert wrong, "decayed weights should have leaked into the backward pass"
    print("gradient silently wrong", loss.item())
