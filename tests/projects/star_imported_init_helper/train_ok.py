"""An MLP initialised by the project's init schemes (star-imported), under no_grad, trained one step."""
import torch
from torch import nn

from initlib import *  # noqa: F401,F403

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
model = init_model_no_grad_(model, scheme="small")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.randn(2, 4)).pow(2).mean()
loss.backward()
opt.step()
