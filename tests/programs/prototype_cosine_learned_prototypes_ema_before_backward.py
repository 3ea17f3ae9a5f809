"""Prototype classifier whose prototypes are learned parameters, also pulled towards the batch means by
an in-place moving average before backward. cosine_similarity saved the prototypes (through the view
`unsqueeze` made of them) for the embeddings' gradient... and for their own: the update changes them."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PrototypeHead(nn.Module):
    def __init__(self, dim, n_cls, momentum=0.9):
        super().__init__()
        self.prototypes = nn.Parameter(torch.randn(n_cls, dim))
        self.momentum = momentum

    def forward(self, z):
        return F.cosine_similarity(z.unsqueeze(1), self.prototypes.unsqueeze(0), dim=-1) / 0.1

    @torch.no_grad()
    def update(self, z, labels):
        for c in labels.unique():
            mean = z[labels == c].mean(0)
            self.prototypes[c].mul_(self.momentum).add_(mean, alpha=1 - self.momentum)  # expect: GG001


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8))
head = PrototypeHead(8, 3)
opt = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
for step in range(3):
    x, y = torch.randn(12, 10), torch.randint(0, 3, (12,))
    z = encoder(x)
    logits = head(z)
    head.update(z.detach(), y)
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("ok", float(loss))
