"""A MoCo-style queue of negative keys: its slots are views `__init__` made under
`@torch.no_grad()`; each step writes the detached keys into the next slot with grad on (allowed:
no value that requires grad goes in), and the loss reads a clone of the queue."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class KeyQueue:
    @torch.no_grad()
    def __init__(self, slots, size, dim):
        self.store = F.normalize(torch.randn(slots * size, dim), dim=1)
        self.slots = [self.store[i * size:(i + 1) * size] for i in range(slots)]
        self.next = 0

    def push(self, keys):
        self.slots[self.next][:] = keys.detach()
        self.next = (self.next + 1) % len(self.slots)

    def negatives(self):
        return self.store.clone()


def contrastive_loss(q, k, negatives, temperature=0.07):
    positive = (q * k).sum(dim=1, keepdim=True)
    logits = torch.cat([positive, q @ negatives.t()], dim=1) / temperature
    return F.cross_entropy(logits, torch.zeros(q.size(0), dtype=torch.long))


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
queue = KeyQueue(slots=4, size=2, dim=4)
for step in range(3):
    x = torch.randn(2, 8)
    q = F.normalize(encoder(x), dim=1)
    k = F.normalize(encoder(x + 0.1 * torch.randn_like(x)), dim=1)
    loss = contrastive_loss(q, k.detach(), queue.negatives())
    queue.push(k)
    opt.zero_grad()
    loss.backward()
    opt.step()
