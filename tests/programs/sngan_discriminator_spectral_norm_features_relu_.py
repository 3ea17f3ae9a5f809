"""An SN-GAN discriminator built with the old `nn.utils.spectral_norm` applies a ReLU in place to
the features its spectrally normalised linear layer saved for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm


class Discriminator(nn.Module):
    def __init__(self, in_dim=64, hidden=128):
        super().__init__()
        self.fc1 = spectral_norm(nn.Linear(in_dim, hidden))
        self.fc2 = spectral_norm(nn.Linear(hidden, 1))

    def forward(self, x):
        h = self.fc1(x)
        score = self.fc2(h)
        F.relu(h, inplace=True)  # expect: GG001
        return score.squeeze(-1) + 0.0 * h.sum()


torch.manual_seed(0)
disc = Discriminator()
optimizer = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.0, 0.9))
real, fake = torch.randn(8, 64), torch.randn(8, 64)
loss = F.softplus(-disc(real)).mean() + F.softplus(disc(fake)).mean()
loss.backward()
optimizer.step()
