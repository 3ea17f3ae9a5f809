"""A multi-branch encoder zero-initializes the first output rows of each branch's projection, found with getattr(self, f"proj_{name}"), outside no_grad: a view of a leaf that requires grad."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BRANCHES = ("rgb", "depth", "flow")


class MultiBranchEncoder(nn.Module):
    def __init__(self, d_in=6, dim=12, n_reserved=2):
        super().__init__()
        for name in BRANCHES:
            setattr(self, f"proj_{name}", nn.Linear(d_in, dim))
        self.fuse = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.Hardswish())
        self.n_reserved = n_reserved
        self._zero_reserved()

    def _zero_reserved(self):
        for name in BRANCHES:
            proj = getattr(self, f"proj_{name}")
            proj.weight[: self.n_reserved].zero_()  # expect: GG002

    def forward(self, inputs):
        fused = sum(getattr(self, f"proj_{name}")(inputs[name]) for name in BRANCHES)
        return self.fuse(fused)


torch.manual_seed(0)
encoder = MultiBranchEncoder()
head = nn.Linear(12, 4)
opt = torch.optim.Adam([*encoder.parameters(), *head.parameters()], lr=1e-3)
inputs = {name: torch.randn(8, 6) for name in BRANCHES}
loss = F.cross_entropy(head(encoder(inputs)), torch.randint(0, 4, (8,)))
opt.zero_grad()
loss.backward()
opt.step()
