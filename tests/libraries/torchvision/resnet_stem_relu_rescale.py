"""A fine-tuning script runs a torchvision ResNet's stem by hand and rescales the stem's activations in place: `model.relu` is ReLU(inplace=True), which saved its output."""
import torch
import torch.nn.functional as F
import torchvision


def stem_features(model, images):
    stem = model.relu(model.bn1(model.conv1(images)))
    stem *= 0.5  # expect: GG001
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
