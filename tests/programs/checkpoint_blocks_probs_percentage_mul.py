"""Checkpointed residual MLP blocks whose sigmoid output is turned into a percentage table in place before backward, without the saved_tensors_hooks offload that would have copied it: sigmoid saved its output, so backward raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d=32, expansion=4, init_scale=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, expansion * d)
        self.fc2 = nn.Linear(expansion * d, d)
        self.gamma = nn.Parameter(torch.full((d,), init_scale))

    def forward(self, x):
        h = self.fc1(self.norm(x))
        h = F.silu(h, inplace=True)  # silu_ saves a copy of its input
        h = self.fc2(h)
        h.mul_(self.gamma)  # layer scale; addmm did not save its output
        return x + h


class Net(nn.Module):
    def __init__(self, d=32, depth=3, use_ckpt=True):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(depth))
        self.head = nn.Linear(d, 8)
        self.use_ckpt = use_ckpt

    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False) if self.use_ckpt else blk(x)
        return torch.sigmoid(self.head(x))


class OffloadStore:
    """Poor man's activation offloading: keep a private copy of every saved tensor."""

    def __init__(self):
        self.n_packed = 0

    def pack(self, t):
        self.n_packed += 1
        return t.detach().to("cpu", copy=True)

    def unpack(self, t):
        return t


def run(model, x, target, offload, scribble):
    store = OffloadStore()
    if offload:
        with torch.autograd.graph.saved_tensors_hooks(store.pack, store.unpack):
            probs = model(x)
            loss = F.binary_cross_entropy(probs, target)
    else:
        probs = model(x)
        loss = F.binary_cross_entropy(probs, target)
    if scribble:
        # turn the probabilities into a 0/100 "confidence" table for the logger, in place
        probs.mul_(100).round_()  # expect: GG001
    model.zero_grad()
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters()}, store.n_packed


if __name__ == "__main__":
    model = Net()
    x, target = torch.randn(16, 32), torch.rand(16, 8)
    got, n_packed = run(model, x, target, offload=False, scribble=True)
    print(f"packed {n_packed} tensors")
