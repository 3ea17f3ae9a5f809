"""`.to(torch.float32)` of a bf16 activation made under autocast is a copy: scaling the copy in
place leaves tanh's saved output alone."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.0))
x = torch.randn(3, 6)

with torch.autocast("cpu", dtype=torch.bfloat16):
    hidden = torch.tanh(encoder(x))
    target = hidden.to(torch.float32)
    target *= 0.5
    loss = F.mse_loss(hidden.float(), target.detach()) + target.sum()
loss.backward()
