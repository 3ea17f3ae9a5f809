"""A gated feature block compiled whole with `torch.compile(model)` (inductor) multiplies a clone of the batch by a sigmoid gate; the training loop adds augmentation noise to the batch in place before the backward pass, which the saved clone does not see: backward runs cleanly."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedBlock(nn.Module):
    def __init__(self, dim=12):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, 4)

    def forward(self, x):
        return self.out(x * torch.sigmoid(self.gate(x)))


torch.manual_seed(0)
model = GatedBlock()
compiled = torch.compile(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batch = torch.randn(16, 12)
labels = torch.randint(0, 4, (16,))

logits = compiled(batch.clone())
batch.add_(0.05 * torch.randn_like(batch))
loss = F.cross_entropy(logits, labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
