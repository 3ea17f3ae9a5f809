"""A classifier is trained, then scored on validation data without `torch.no_grad()` (the
prediction's graph keeps the second layer's weight), and its optimizer steps. The validation
prediction then feeds a penalty whose backward runs through that graph: the stepped weight it
saved has changed, so the backward raises."""
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
opt.step()  # expect: GG001
target = float(y.mean())
offset_loss = (offset - target) * 0.5 + val_pred.mean()
offset_opt.zero_grad()
offset_loss.backward()
offset_opt.step()
