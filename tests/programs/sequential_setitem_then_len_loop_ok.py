"""The trailing in-place ReLU is replaced by assignment (model[-1] = ...); the model then runs its children by index over range(len(model))."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.ReLU(inplace=True))
model[-1] = nn.Identity()
x = torch.randn(2, 4)
for i in range(len(model)):
    x = model[i](x)
x.sum().backward()
print("ok")
