"""A residual MLP whose activation is picked by a config string with early returns
(`if self.act == "relu": return F.relu(x)`); the block adds its skip connection in place to the
activation's output, and ReLU saved that output for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualMLP(nn.Module):
    def __init__(self, d=16, act="relu"):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.act = act

    def activation(self, x):
        if self.act == "relu":
            return F.relu(x)
        if self.act == "gelu":
            return F.gelu(x)
        x = x * torch.sigmoid(x)
        return x

    def forward(self, x):
        h = self.activation(self.fc(x))
        h += x  # expect: GG001
        return h


model = nn.Sequential(ResidualMLP(act="relu"), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 16), torch.randn(8, 1)
loss = F.mse_loss(model(x), y)
opt.zero_grad()
loss.backward()
opt.step()
