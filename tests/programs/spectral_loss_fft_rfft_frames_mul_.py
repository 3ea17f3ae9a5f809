"""A spectral loss windows its frames in place after `torch.fft.rfft` took their spectrum: the
real-to-complex FFT saved the frames for backward, and `frames.mul_(window)` changes them."""
import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self, n=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n, n), nn.Tanh(), nn.Linear(n, n))

    def forward(self, noisy):
        return self.net(noisy)


def spectral_loss(pred, target, window):
    frames = pred.unfold(-1, 16, 8)
    spec = torch.fft.rfft(frames).abs()
    frames.mul_(window)  # expect: GG001
    ref = torch.fft.rfft(target.unfold(-1, 16, 8) * window).abs()
    return (spec - ref).pow(2).mean() + frames.pow(2).mean()


torch.manual_seed(0)
model = Denoiser()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
noisy, clean = torch.randn(4, 64), torch.randn(4, 64)
loss = spectral_loss(model(noisy), clean, torch.hann_window(16))
loss.backward()
optimizer.step()
