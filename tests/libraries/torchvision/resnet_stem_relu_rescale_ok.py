"""The twin of resnet_stem_relu_rescale.py, written out of place (`stem = stem * 0.5`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
import torch
import torch.nn.functional as F
import torchvision


def stem_features(model, images):
    stem = model.relu(model.bn1(model.conv1(images)))
    stem = stem * 0.5
    return model.layer1(model.maxpool(stem))


torch.manual_seed(0)
model = torchvision.models.resnet18(weights=None)
head = torch.nn.Linear(64, 10)
opt = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.01)
images = torch.randn(2, 3, 32, 32)
labels = torch.tensor([1, 7])
logits = head(stem_features(model, images).mean(dim=(2, 3)))
loss = F.cross_entropy(logits, labels)
opt.zero_grad()
loss.backward()
opt.step()
