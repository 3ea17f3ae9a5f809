"""An encoder returns its features and pooled summaries; the caller keeps the first with a starred
unpacking (`enc, *extras = self.encoder(x)`) and adds a positional bias to it in place: it is the
output of tanh, which saved it for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        return h, h.mean(0), h.amax(0)


class Model(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.encoder = Encoder(d)
        self.pos = nn.Parameter(torch.zeros(d))
        self.head = nn.Linear(d, 3)

    def forward(self, x):
        enc, *extras = self.encoder(x)
        enc += self.pos  # expect: GG001
        return self.head(enc)


model = Model()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 8), torch.randint(0, 3, (5,))
loss = F.cross_entropy(model(x), y)
opt.zero_grad()
loss.backward()
opt.step()
