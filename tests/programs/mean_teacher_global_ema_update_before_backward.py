"""Mean teacher: `ema_update()` (no arguments: it reads the module-level teacher and student)
moves the teacher's weights towards the student's in place under no_grad, after the teacher's
forward and before the consistency loss's backward, which needs the teacher's saved weights."""
import torch
import torch.nn as nn

teacher = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
student = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(student.parameters(), lr=0.1)


def ema_update(decay=0.99):
    with torch.no_grad():
        for pt, ps in zip(teacher.parameters(), student.parameters()):
            pt.mul_(decay).add_(ps, alpha=1 - decay)  # expect: GG001


for _ in range(3):
    x = torch.randn(5, 4)
    consistency = (student(x) - teacher(x)).pow(2).mean()
    ema_update()
    opt.zero_grad()
    consistency.backward()
    opt.step()
