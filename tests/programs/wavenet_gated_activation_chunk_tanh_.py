"""A WaveNet residual layer chunks its dilated conv output into filter and gate and applies tanh_ in place to the filter half: chunk outputs are multi-output views."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedResidual(nn.Module):
    def __init__(self, ch, dilation):
        super().__init__()
        self.dilated = nn.Conv1d(ch, 2 * ch, kernel_size=2, dilation=dilation, padding=dilation)
        self.res = nn.Conv1d(ch, ch, 1)
        self.skip = nn.Conv1d(ch, ch, 1)

    def forward(self, x):
        h = self.dilated(x)[..., : x.shape[-1]]
        filt, gate = h.chunk(2, dim=1)
        filt.tanh_()  # expect: GG003
        gate = gate.sigmoid()
        z = filt * gate
        return x + self.res(z), self.skip(z)


class WaveNet(nn.Module):
    def __init__(self, ch=8, n_classes=16, dilations=(1, 2, 4)):
        super().__init__()
        self.embed = nn.Embedding(n_classes, ch)
        self.layers = nn.ModuleList(GatedResidual(ch, d) for d in dilations)
        self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(ch, ch, 1), nn.ReLU(), nn.Conv1d(ch, n_classes, 1))

    def forward(self, tokens):
        x = self.embed(tokens).transpose(1, 2)
        skips = []
        for layer in self.layers:
            x, s = layer(x)
            skips.append(s)
        return self.out(torch.stack(skips).sum(0))


torch.manual_seed(0)
model = WaveNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
audio = torch.randint(0, 16, (2, 20))
logits = model(audio[:, :-1])
loss = F.cross_entropy(logits, audio[:, 1:])
opt.zero_grad()
loss.backward()
opt.step()
