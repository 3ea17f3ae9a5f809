"""The Annotated Transformer's label-smoothing loss: the smoothed target distribution is built in a
clone of the log-softmax output's data (`x.data.clone()`), so fill_, scatter_ and the padding
assignment change a tensor no op saved."""
import torch
import torch.nn as nn


class LabelSmoothing(nn.Module):
    def __init__(self, size, padding_idx, smoothing=0.1):
        super().__init__()
        self.criterion = nn.KLDivLoss(reduction="sum")
        self.padding_idx = padding_idx
        self.confidence = 1.0 - smoothing
        self.smoothing = smoothing
        self.size = size

    def forward(self, x, target):
        true_dist = x.data.clone()
        true_dist.fill_(self.smoothing / (self.size - 2))
        true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
        true_dist[:, self.padding_idx] = 0
        mask = torch.nonzero(target.data == self.padding_idx)
        if mask.dim() > 0:
            true_dist.index_fill_(0, mask.squeeze(), 0.0)
        return self.criterion(x, true_dist.clone().detach())


class Generator(nn.Module):
    def __init__(self, d_model, vocab):
        super().__init__()
        self.proj = nn.Linear(d_model, vocab)

    def forward(self, h):
        return torch.log_softmax(self.proj(h), dim=-1)


torch.manual_seed(0)
generator = Generator(16, 11)
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
criterion = LabelSmoothing(11, padding_idx=0)
for _ in range(2):
    hidden, target = torch.randn(8, 16), torch.randint(0, 11, (8,))
    loss = criterion(generator(hidden), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
