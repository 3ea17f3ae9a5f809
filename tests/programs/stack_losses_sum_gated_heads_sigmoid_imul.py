"""Per-sample losses collected in a list and reduced with `torch.stack(losses).sum()`; the gated head
multiplies its sigmoid gate in place (`gate *= mask`), and sigmoid saved its output."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedHead(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.value = nn.Linear(d, 1)
        self.gate = nn.Linear(d, 1)

    def forward(self, x, mask):
        gate = torch.sigmoid(self.gate(x))
        gate *= mask  # expect: GG001
        return self.value(x) * gate


head = GatedHead()
opt = torch.optim.SGD(head.parameters(), lr=0.1)
batch = [(torch.randn(4, 8), torch.ones(4, 1), torch.randn(4, 1)) for _ in range(3)]
losses = []
for x, mask, y in batch:
    losses.append(F.mse_loss(head(x, mask), y))
loss = torch.stack(losses).sum()
opt.zero_grad()
loss.backward()
opt.step()
