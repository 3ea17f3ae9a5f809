"""A classifier is trained, then scored on validation data without `torch.no_grad()` (the
prediction's graph keeps the second layer's weight), and its optimizer steps. A separate learned
offset is then fitted with a loss built only from it and Python numbers: that backward's graph
saves nothing, so it never reaches the stepped weight and every line runs."""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
offset = torch.zeros((), requires_grad=True)
offset_opt = torch.optim.SGD([offset], lr=0.01)
x, y = torch.randn(32, 8), torch.randn(32, 1)
x_val = torch.randn(8, 8)

loss = (net(x) - y).pow(2).mean()
opt.zero_grad()
loss.backward()
val_pred = net(x_val)
opt.step()
target = float(y.mean())
offset_loss = (offset - target) * 0.5 + 1.0
offset_opt.zero_grad()
offset_loss.backward()
offset_opt.step()
