"""A multi-label classifier replaces torchvision ResNet-18's fc with Linear + Sigmoid and clamps the probabilities in place before the loss: sigmoid's backward needs its output."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models import resnet18


def build_model(n_labels=4):
    model = resnet18(weights=None)
    model.fc = nn.Sequential(nn.Linear(512, n_labels), nn.Sigmoid())
    return model


torch.manual_seed(0)
model = build_model()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
images = torch.randn(2, 3, 32, 32)
targets = torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
probs = model(images)
probs.clamp_(1e-4, 1 - 1e-4)  # expect: GG001
loss = F.binary_cross_entropy(probs, targets)
opt.zero_grad()
loss.backward()
opt.step()
