"""The twin of resnet_sigmoid_head_probs_clamp_.py, written out of place (`probs = probs.clamp(1e-4, 1 - 1e-4)`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
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
probs = probs.clamp(1e-4, 1 - 1e-4)
loss = F.binary_cross_entropy(probs, targets)
opt.zero_grad()
loss.backward()
opt.step()
