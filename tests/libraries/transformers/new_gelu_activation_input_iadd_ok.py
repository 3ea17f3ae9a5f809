"""The twin of new_gelu_activation_input_iadd.py, written out of place (`h = h + y`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
import torch
import torch.nn as nn
from transformers.activations import NewGELUActivation


class Refiner(nn.Module):
    def __init__(self, dim=12):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = NewGELUActivation()

    def forward(self, x):
        h = self.fc(x)
        y = self.act(h)
        h = h + y
        return h


torch.manual_seed(0)
model = Refiner()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(4, 12)
loss = model(x).sum()
opt.zero_grad()
loss.backward()
opt.step()
