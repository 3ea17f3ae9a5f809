"""Symmetric parametrization trained a few steps."""
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


layer = nn.Linear(6, 6)
parametrize.register_parametrization(layer, "weight", Symmetric())
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4, 6)
    loss = (layer(x) ** 2).mean() + layer.weight.pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
