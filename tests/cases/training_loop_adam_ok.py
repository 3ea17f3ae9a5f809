"""backward, then opt.step() and zero_grad each iteration: the step's in-place updates are safe."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, target = torch.randn(8, 4), torch.randn(8, 1)
    out = model(x)
    loss = nn.functional.mse_loss(out, target)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
