"""A mean teacher made in one line, `copy.deepcopy(model).requires_grad_(False)`, updated after
each step with in-place `mul_`/`add_` outside `torch.no_grad()`: its parameters require no grad,
so torch allows it."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))

    def forward(self, x):
        return self.body(x)


def update_teacher(teacher, student, decay=0.99):
    for t, s in zip(teacher.parameters(), student.parameters()):
        t.mul_(decay).add_(s.detach(), alpha=1 - decay)


model = TinyNet()
teacher = copy.deepcopy(model).requires_grad_(False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    x = torch.randn(5, 8)
    loss = F.mse_loss(model(x), teacher(x + 0.1 * torch.randn_like(x)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    update_teacher(teacher, model)
