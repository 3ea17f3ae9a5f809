"""Small HiFi-GAN style residual 1D-conv stack using the new
torch.nn.utils.parametrizations.weight_norm, trained on a waveform reconstruction
loss with a per-channel gain constraint."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm

torch.manual_seed(0)

CHANNELS, KERNEL, DILATIONS, MAX_GAIN = 16, 3, (1, 3, 5), 0.5


class ResBlock1d(nn.Module):
    def __init__(self, channels, kernel, dilations):
        super().__init__()
        self.convs = nn.ModuleList(
            weight_norm(nn.Conv1d(channels, channels, kernel, dilation=d,
                                  padding=d * (kernel - 1) // 2))
            for d in dilations
        )

    def forward(self, x):
        for conv in self.convs:
            x = x + conv(F.leaky_relu(x, 0.1))
        return x


class TinyGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = weight_norm(nn.Conv1d(1, CHANNELS, 7, padding=3))
        self.block = ResBlock1d(CHANNELS, KERNEL, DILATIONS)
        self.post = weight_norm(nn.Conv1d(CHANNELS, 1, 7, padding=3))

    def forward(self, wav):
        return torch.tanh(self.post(F.leaky_relu(self.block(self.pre(wav)), 0.1)))


def apply_gain_constraint(model, max_gain):
    """Keep the weight-norm magnitudes (g) bounded, like a max-norm constraint."""
    for module in model.modules():
        if isinstance(module, nn.Conv1d) and hasattr(module, "parametrizations"):
            g = module.parametrizations.weight.original0
            g.data.clamp_(max=max_gain)  # expect: GG004


model = TinyGenerator()
reference = copy.deepcopy(model)  # same weights, used to check the gradients

wav = torch.randn(2, 1, 256)
target = torch.tanh(torch.randn(2, 1, 256))

recon = model(wav)
loss = F.l1_loss(recon, target)
apply_gain_constraint(model, MAX_GAIN)
loss.backward()

ref_loss = F.l1_loss(reference(wav), target)
ref_loss.backward()
assert torch.allclose(loss, ref_loss)

got = model.block.convs[0].parametrizations.weight.original1.grad
want = reference.block.convs[0].parametrizations.weight.original1.grad
print("max |grad diff| on v:", (got - want).abs().max().item())
assert not torch.allclose(got, want, atol=1e-6), "gradients unexpectedly match"
