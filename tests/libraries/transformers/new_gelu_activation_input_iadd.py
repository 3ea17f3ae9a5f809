"""GPT-2's NewGELUActivation (tanh approximation written out with `torch.pow` and `*`) saved its input; adding the activation back onto that input in place breaks its backward."""
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
        h += y  # expect: GG001
        return h


torch.manual_seed(0)
model = Refiner()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(4, 12)
loss = model(x).sum()
opt.zero_grad()
loss.backward()
opt.step()
