"""Prototype classifier: the logits are cosine similarities between the embeddings and a memory of class
prototypes kept as a buffer; the memory's moving average is updated in place after the logits and before
backward. cosine_similarity saves a tensor for the gradient of the other input only when that input
requires grad; the prototypes never do, so the update leaves nothing backward needs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PrototypeHead(nn.Module):
    def __init__(self, dim, n_cls, momentum=0.9):
        super().__init__()
        self.register_buffer("prototypes", torch.randn(n_cls, dim))
        self.momentum = momentum

    def forward(self, z):
        return F.cosine_similarity(z.unsqueeze(1), self.prototypes.unsqueeze(0), dim=-1) / 0.1

    @torch.no_grad()
    def update(self, z, labels):
        for c in labels.unique():
            mean = z[labels == c].mean(0)
            self.prototypes[c].mul_(self.momentum).add_(mean, alpha=1 - self.momentum)


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8))
head = PrototypeHead(8, 3)
opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
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
