"""A SwAV-style model re-normalizes its prototype vectors at the start of every step with weight.copy_(...) but forgets torch.no_grad(): the weight is a leaf that requires grad."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SwAVHead(nn.Module):
    def __init__(self, d_in=16, proj=8, n_prototypes=6):
        super().__init__()
        self.projector = nn.Sequential(nn.Linear(d_in, 32), nn.BatchNorm1d(32), nn.ReLU(True), nn.Linear(32, proj))
        self.prototypes = nn.Linear(proj, n_prototypes, bias=False)

    def normalize_prototypes(self):
        w = self.prototypes.weight.detach().clone()
        self.prototypes.weight.copy_(F.normalize(w, dim=1))  # expect: GG002

    def forward(self, x):
        z = F.normalize(self.projector(x), dim=1)
        return z, self.prototypes(z)


@torch.no_grad()
def sinkhorn(scores, eps=0.05, iters=3):
    q = torch.exp(scores / eps).t()
    q /= q.sum()
    for _ in range(iters):
        q /= q.sum(dim=1, keepdim=True)
        q /= q.sum(dim=0, keepdim=True)
    return (q / q.sum(dim=0, keepdim=True)).t()


torch.manual_seed(0)
model = SwAVHead()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    model.normalize_prototypes()
    view1, view2 = torch.randn(8, 16), torch.randn(8, 16)
    (_, s1), (_, s2) = model(view1), model(view2)
    q1, q2 = sinkhorn(s1), sinkhorn(s2)
    loss = -0.5 * ((q1 * F.log_softmax(s2 / 0.1, 1)).sum(1) + (q2 * F.log_softmax(s1 / 0.1, 1)).sum(1)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
