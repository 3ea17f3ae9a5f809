"""FGSM adversarial example generation against a small CNN whose input normalisation is
attached as a forward pre-hook built by a factory function."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_input_normalizer(mean, std):
    mean = torch.tensor(mean).view(1, -1, 1, 1)
    std = torch.tensor(std).view(1, -1, 1, 1)

    def hook(module, args):
        (x,) = args
        x.sub_(mean)  # expect: GG002
        x.div_(std)
        return (x,)

    return hook


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


class FGSM:
    def __init__(self, model, eps=8 / 255):
        self.model = model
        self.eps = eps

    def __call__(self, images, labels):
        images = images.clone().detach().requires_grad_(True)
        loss = F.cross_entropy(self.model(images), labels)
        grad, = torch.autograd.grad(loss, images)
        return (images + self.eps * grad.sign()).clamp(0, 1).detach()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = SmallCNN().eval()
    model.register_forward_pre_hook(
        make_input_normalizer((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))
    )
    attack = FGSM(model)
    images = torch.rand(4, 3, 32, 32)
    labels = torch.randint(0, 10, (4,))
    adv = attack(images, labels)
    with torch.no_grad():
        flipped = (model(adv).argmax(1) != model(images).argmax(1)).sum().item()
    print("perturbation", (adv - images).abs().max().item(), "flipped", flipped)
    F.cross_entropy(model(adv), labels).backward()
