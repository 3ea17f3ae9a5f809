"""The same memory bank, storing detached embeddings (as MoCo-style queues do): the bank never
requires grad, so `pow` on it saves nothing and the second write is safe."""
import torch
import torch.nn as nn


class MemoryBank:
    def __init__(self, size, dim):
        self.bank = torch.zeros(size, dim)

    def store(self, index, embedding):
        self.bank[index] = embedding.detach()
        return self.bank


encoder = nn.Linear(4, 3)
memory = MemoryBank(8, 3)
query = encoder(torch.randn(4))
first = memory.store(0, encoder(torch.randn(4)))
loss = (first.pow(2).sum() - query.sum()) ** 2
memory.store(1, encoder(torch.randn(4)))
loss.backward()
