"""A trainer builds its loss from a dotted class name in its config (`importlib`): the analysis cannot
follow the criterion, but `loss` is computed from `probs`, the output of `torch.sigmoid`, which
saved it for backward; clamping `probs` in place before the loss breaks `loss.backward()`."""
import importlib
import os

import torch
import torch.nn as nn

cfg = {"loss": os.environ.get("LOSS", "torch.nn.BCELoss"), "lr": 0.1}


class Scorer(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, 1)

    def forward(self, x):
        return self.fc(x).squeeze(-1)


model = Scorer()
module_name, _, class_name = cfg["loss"].rpartition(".")
criterion = getattr(importlib.import_module(module_name), class_name)()
opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
x, y = torch.randn(16, 8), torch.randint(0, 2, (16,)).float()
probs = torch.sigmoid(model(x))
probs.clamp_(1e-4, 1 - 1e-4)  # expect: GG001
loss = criterion(probs, y)
opt.zero_grad()
loss.backward()
opt.step()
