"""A feed-forward layer takes its activation from transformers' `ACT2FN["relu"]` (nn.ReLU) and adds the skip onto the activation in place; ReLU's backward needs its output."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers.activations import ACT2FN


class FeedForward(nn.Module):
    def __init__(self, dim=16, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.skip = nn.Linear(dim, hidden)
        self.act = ACT2FN["relu"]
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        h = self.act(self.fc1(x))
        h += self.skip(x)  # expect: GG001
        return self.fc2(h)


torch.manual_seed(0)
ff = FeedForward()
opt = torch.optim.AdamW(ff.parameters(), lr=1e-3)
x = torch.randn(4, 16)
loss = F.mse_loss(ff(x), torch.zeros(4, 16))
opt.zero_grad()
loss.backward()
opt.step()
