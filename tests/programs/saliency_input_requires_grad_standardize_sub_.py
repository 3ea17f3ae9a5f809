"""A saliency-map helper marks the raw image as requiring grad and only then standardizes it in place with sub_/div_: the image is a leaf that requires grad."""
import torch
import torch.nn as nn

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


class TinyResNet(nn.Module):
    def __init__(self, n_cls=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8))
        self.fc = nn.Linear(8, n_cls)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        return self.fc(x.mean(dim=(2, 3)))


def saliency(model, image, target_class=None):
    image = image.clone().requires_grad_(True)
    image.sub_(MEAN).div_(STD)  # expect: GG002
    logits = model(image)
    target_class = logits.argmax(1) if target_class is None else target_class
    logits.gather(1, target_class[:, None]).sum().backward()
    return image.grad.abs().amax(dim=1)


torch.manual_seed(0)
model = TinyResNet().eval()
images = torch.rand(2, 3, 8, 8)
maps = saliency(model, images)
print(maps.shape)
