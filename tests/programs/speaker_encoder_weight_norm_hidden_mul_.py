"""A speaker encoder's output layer is weight-normalised with `nn.utils.parametrizations.weight_norm`,
as TTS code does; the layer still saves its input for backward (its weight is computed from
parameters that require grad), and scaling that input in place afterwards breaks backward."""
import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm


class SpeakerEncoder(nn.Module):
    def __init__(self, n_mels=40, hidden=64, emb=32):
        super().__init__()
        self.rnn = nn.GRU(n_mels, hidden, num_layers=2, batch_first=True)
        self.proj = weight_norm(nn.Linear(hidden, emb))

    def forward(self, mels, gate):
        out, _ = self.rnn(mels)
        last = out[:, -1]
        emb = self.proj(last)
        last.mul_(gate)  # expect: GG001
        return emb + last.mean(-1, keepdim=True)


torch.manual_seed(0)
encoder = SpeakerEncoder()
optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)
emb = encoder(torch.randn(4, 10, 40), torch.rand(64))
loss = emb.pow(2).mean()
loss.backward()
optimizer.step()
