"""Iterative magnitude pruning of an MLP with torch.nn.utils.prune: each step prunes 20% more of
the smallest weights by tightening the existing masks, then backpropagates the step's loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))
layers = [m for m in model if isinstance(m, nn.Linear)]
prune.global_unstructured([(m, "weight") for m in layers], pruning_method=prune.L1Unstructured, amount=0.1)
opt = torch.optim.Adam([m.weight_orig for m in layers] + [m.bias for m in layers], lr=1e-3)


def tighten(layer, fraction):
    with torch.no_grad():
        scores = (layer.weight_orig * layer.weight_mask).abs()
        k = max(1, int(fraction * scores.numel()))
        threshold = scores.flatten().kthvalue(k).values
        layer.weight_mask.mul_((scores > threshold).float())  # expect: GG001


x, y = torch.randn(32, 20), torch.randint(0, 5, (32,))
for step in range(3):
    loss = F.cross_entropy(model(x), y)
    for layer in layers:
        tighten(layer, 0.2 * (step + 1))
    opt.zero_grad()
    loss.backward()
    opt.step()

for layer in layers:
    prune.remove(layer, "weight")
print(sum(int((m.weight == 0).sum()) for m in layers), "weights pruned")
