"""The same mean-teacher step with the teacher's parameters frozen: the teacher builds no graph, so updating its EMA before the student's backward is safe."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNet(nn.Module):
    def __init__(self, n_cls=4):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.GroupNorm(2, 8), nn.SiLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8, n_cls)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


@torch.no_grad()
def update_teacher(teacher, student, alpha=0.99):
    for t_param, s_param in zip(teacher.parameters(), student.parameters()):
        t_param.mul_(alpha).add_(s_param, alpha=1 - alpha)


def consistency(student_logits, teacher_logits):
    return F.mse_loss(student_logits.softmax(-1), teacher_logits.softmax(-1))


torch.manual_seed(0)
student = ConvNet()
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD(student.parameters(), lr=0.05)
for step in range(2):
    labeled, labels = torch.randn(4, 1, 8, 8), torch.randint(0, 4, (4,))
    unlabeled = torch.randn(6, 1, 8, 8)
    noisy = unlabeled + 0.1 * torch.randn_like(unlabeled)
    loss = F.cross_entropy(student(labeled), labels) + consistency(student(noisy), teacher(unlabeled))
    update_teacher(teacher, student)
    opt.zero_grad()
    loss.backward()
    opt.step()
