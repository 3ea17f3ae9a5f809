"""Pruned two-layer regressor where the second layer is renormalised through .data after each forward (max-norm style)."""
import torch
import torch.nn as nn
import torch.nn.utils.prune as prune


def build(seed):
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    prune.l1_unstructured(net[0], "weight", amount=0.25)
    prune.l1_unstructured(net[2], "weight", amount=0.25)
    return net


def max_norm_(layer, max_norm=0.5):
    w = layer.weight
    norm = w.norm(dim=1, keepdim=True).clamp(min=max_norm)
    w.data.mul_(max_norm / norm)  # expect: GG004


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(20, 6)
    y = torch.randn(20, 1)

    net = build(1)
    loss = ((net(x) - y) ** 2).mean()
    max_norm_(net[2])
    loss.backward()
    got = net[0].weight_orig.grad.clone()

    ref = build(1)
    ref_loss = ((ref(x) - y) ** 2).mean()
    ref_loss.backward()
    want = ref[0].weight_orig.grad

    print("loss", loss.item(), "grad diff", (got - want).abs().max().item())
    assert not torch.allclose(got, want), "gradient unexpectedly correct"
