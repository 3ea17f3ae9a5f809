"""A learnable mel frontend reads its filterbank from a module-level cache filled under @torch.no_grad(), then rectifies the cached transpose view in place with grad enabled."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

_FB_CACHE = {}


@torch.no_grad()
def _build_view(module):
    return module.filters.t()


def cached_filterbank(module, refresh=False):
    key = (id(module), tuple(module.filters.shape))
    if refresh or key not in _FB_CACHE:
        _FB_CACHE[key] = _build_view(module)
    return _FB_CACHE[key]


def triangular_init(n_mels, n_freq):
    centers = torch.linspace(0, n_freq - 1, n_mels + 2)
    freqs = torch.arange(n_freq).float()
    fb = torch.zeros(n_mels, n_freq)
    for m in range(1, n_mels + 1):
        left, c, right = centers[m - 1], centers[m], centers[m + 1]
        up = (freqs - left) / (c - left)
        down = (right - freqs) / (right - c)
        fb[m - 1] = torch.clamp(torch.minimum(up, down), min=0)
    return fb


class LearnableMel(nn.Module):
    def __init__(self, n_fft=64, n_mels=12, rectify=True):
        super().__init__()
        self.n_fft = n_fft
        self.filters = nn.Parameter(triangular_init(n_mels, n_fft // 2 + 1))
        self.rectify = rectify

    def forward(self, wav):
        spec = torch.stft(wav, self.n_fft, hop_length=self.n_fft // 4, window=torch.hann_window(self.n_fft),
                          return_complex=True).abs().pow(2)
        fb = cached_filterbank(self)
        if self.rectify:
            fb.clamp_(min=0.0)  # expect: GG003
        mel = spec.transpose(1, 2) @ fb
        return torch.log(mel + 1e-6)


class KeywordSpotter(nn.Module):
    def __init__(self, n_keywords=4):
        super().__init__()
        self.front = LearnableMel()
        self.gru = nn.GRU(12, 16, batch_first=True)
        self.cls = nn.Linear(16, n_keywords)

    def forward(self, wav):
        _, h = self.gru(self.front(wav))
        return self.cls(h[-1])


model = KeywordSpotter()
wav = torch.randn(3, 800)
labels = torch.tensor([0, 2, 3])
loss = F.cross_entropy(model(wav), labels)
loss.backward()
print("loss", loss.item(), "cache entries", len(_FB_CACHE))
