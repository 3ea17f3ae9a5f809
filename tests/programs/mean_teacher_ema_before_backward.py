"""A mean-teacher step updates the EMA teacher before the backward; the teacher was deep-copied with requires_grad on and its output is not detached, so its saved weights are changed."""
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
        t_param.mul_(alpha).add_(s_param, alpha=1 - alpha)  # expect: GG001


def consistency(student_logits, teacher_logits):
    return F.mse_loss(student_logits.softmax(-1), teacher_logits.softmax(-1))


torch.manual_seed(0)
student = ConvNet()
teacher = copy.deepcopy(student)
opt = torch.optim.SGD(student.parameters(), lr=0.05)
labeled, labels = torch.randn(4, 1, 8, 8), torch.randint(0, 4, (4,))
unlabeled = torch.randn(6, 1, 8, 8)
noisy = unlabeled + 0.1 * torch.randn_like(unlabeled)
loss = F.cross_entropy(student(labeled), labels) + consistency(student(noisy), teacher(unlabeled))
update_teacher(teacher, student)
opt.zero_grad()
loss.backward()
opt.step()
