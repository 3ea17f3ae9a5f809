"""A multi-scale regression loss summed with a generator expression, `sum(F.l1_loss(p, t) for p, t in
zip(...))`; the decoder scales its ReLU output out of place, so backward runs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Decoder(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.up1 = nn.Linear(d, d)
        self.up2 = nn.Linear(d, d)

    def forward(self, z):
        coarse = self.up1(z)
        fine = F.relu(self.up2(coarse))
        fine = fine.mul(2.0)
        return [coarse, fine]


decoder = Decoder()
opt = torch.optim.SGD(decoder.parameters(), lr=0.1)
z = torch.randn(3, 8)
targets = [torch.randn(3, 8), torch.randn(3, 8)]
preds = decoder(z)
loss = sum(F.l1_loss(p, t) for p, t in zip(preds, targets))
opt.zero_grad()
loss.backward()
opt.step()
