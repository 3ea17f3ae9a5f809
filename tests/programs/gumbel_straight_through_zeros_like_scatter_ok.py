"""A hard Gumbel-softmax written by hand builds its one-hot sample in a new tensor
(`torch.zeros_like(logits).scatter_`), as F.gumbel_softmax does, leaving softmax's saved output alone."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def gumbel_softmax_hard(logits, tau=1.0):
    gumbels = -torch.empty_like(logits).exponential_().log()
    y_soft = F.softmax((logits + gumbels) / tau, dim=-1)
    index = y_soft.max(dim=-1, keepdim=True)[1]
    y_hard = torch.zeros_like(logits)
    y_hard.scatter_(-1, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


class DiscreteBottleneck(nn.Module):
    def __init__(self, d_in=12, n_codes=8, d_out=12):
        super().__init__()
        self.to_logits = nn.Linear(d_in, n_codes)
        self.codebook = nn.Linear(n_codes, d_out, bias=False)

    def forward(self, x):
        return self.codebook(gumbel_softmax_hard(self.to_logits(x)))


torch.manual_seed(0)
model = DiscreteBottleneck()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(16, 12)
loss = F.mse_loss(model(x), x)
opt.zero_grad()
loss.backward()
opt.step()
