"""1-D conv vocoder-style stack using nn.utils.parametrizations.weight_norm, with a max-norm
constraint on the weight-norm magnitude (original0) enforced automatically by a module hook."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm

torch.manual_seed(0)


class ResStack(nn.Module):
    def __init__(self, channels=16, dilations=(1, 3, 9)):
        super().__init__()
        self.convs = nn.ModuleList(
            weight_norm(nn.Conv1d(channels, channels, 3, dilation=d, padding=d)) for d in dilations
        )

    def forward(self, x):
        for conv in self.convs:
            x = x + conv(F.leaky_relu(x, 0.1))
        return x


class MaxNormConstraint:
    """Caps the per-output-channel norm g of weight-normed convs."""

    def __init__(self, max_norm=1.5):
        self.max_norm = max_norm

    @torch.no_grad()
    def __call__(self, module, args, output):
        g = module.parametrizations.weight.original0
        g.clamp_(max=self.max_norm)  # expect: GG001


def install_constraint(model, max_norm):
    handles = []
    for m in model.modules():
        if isinstance(m, nn.Conv1d) and hasattr(m, "parametrizations"):
            handles.append(m.register_forward_hook(MaxNormConstraint(max_norm)))
    return handles


model = nn.Sequential(
    nn.Conv1d(1, 16, 7, padding=3),
    ResStack(16),
    nn.Conv1d(16, 1, 7, padding=3),
)
handles = install_constraint(model, max_norm=0.5)
opt = torch.optim.Adam(model.parameters(), lr=2e-4, betas=(0.8, 0.99))

for step in range(2):
    wav = torch.randn(4, 1, 256)
    target = torch.tanh(wav.roll(1, dims=-1))
    out = torch.tanh(model(wav))
    loss = F.l1_loss(out, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
