"""A memory bank (a plain object holding a tensor) stores an embedding that requires grad into
one slot; the loss squares the bank (`pow` saves it), then a second write changes the bank in
place before the backward pass."""
import torch
import torch.nn as nn


class MemoryBank:
    def __init__(self, size, dim):
        self.bank = torch.zeros(size, dim)

    def store(self, index, embedding):
        self.bank[index] = embedding  # expect: GG001
        return self.bank


encoder = nn.Linear(4, 3)
memory = MemoryBank(8, 3)
first = memory.store(0, encoder(torch.randn(4)))
loss = first.pow(2).sum()
memory.store(1, encoder(torch.randn(4)))
loss.backward()
