"""A transformer-style stack kept as a `ModuleList` of `ModuleList`s, unpacked in the loop
(`for norm, ff in self.layers`); each feed-forward ends in tanh and the residual is added to its
output in place, which tanh saved for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Stack(nn.Module):
    def __init__(self, d=16, depth=2):
        super().__init__()
        self.layers = nn.ModuleList([
            nn.ModuleList([nn.LayerNorm(d), nn.Sequential(nn.Linear(d, d), nn.Tanh())]) for _ in range(depth)
        ])

    def forward(self, x):
        for norm, ff in self.layers:
            h = ff(norm(x))
            h += x  # expect: GG001
            x = h
        return x


model = Stack()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(4, 16)
loss = F.mse_loss(model(x), torch.zeros(4, 16))
opt.zero_grad()
loss.backward()
opt.step()
