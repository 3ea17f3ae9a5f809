"""A binarized-activation net rounds its sigmoid codes through .data.round_() as a straight-through trick; sigmoid's saved output is rounded too, so backward silently uses y*(1-y) = 0."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class BinaryCodes(nn.Module):
    def __init__(self, d_in=8, bits=12):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, 32), nn.GELU(), nn.Linear(32, bits))
        self.decoder = nn.Sequential(nn.Linear(bits, 32), nn.GELU(), nn.Linear(32, d_in))

    def binarize(self, logits):
        codes = torch.sigmoid(logits)
        codes.data.round_()  # expect: GG004
        return codes

    def forward(self, x):
        return self.decoder(self.binarize(self.encoder(x)))


class BinaryCodesSTE(BinaryCodes):
    def binarize(self, logits):
        codes = torch.sigmoid(logits)
        return codes + (codes.round() - codes).detach()


torch.manual_seed(0)
model = BinaryCodes()
reference = BinaryCodesSTE()
reference.load_state_dict(copy.deepcopy(model.state_dict()))
x = torch.randn(16, 8)

loss = F.mse_loss(model(x), x)
loss.backward()
ref_loss = F.mse_loss(reference(x), x)
ref_loss.backward()
assert torch.allclose(loss, ref_loss), "forward values differ"
assert not torch.allclose(model.encoder[0].weight.grad, reference.encoder[0].weight.grad), "gradient unexpectedly right"
