"""Feature pyramid whose stages are yielded by a generator of (name, sigmoid-gated map) pairs and
collected with dict(); the gates of one scale are sharpened in place before the fusion loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedPyramid(nn.Module):
    def __init__(self, channels=(3, 8, 16)):
        super().__init__()
        self.convs = nn.ModuleList(
            nn.Conv2d(a, b, 3, stride=2, padding=1) for a, b in zip(channels[:-1], channels[1:]))

    def gates(self, x):
        for i, conv in enumerate(self.convs):
            x = conv(x)
            yield f"p{i + 2}", torch.sigmoid(x)


def fusion_loss(maps):
    total = 0.0
    for name, g in maps.items():
        total = total + g.mean()
    return total


if __name__ == "__main__":
    torch.manual_seed(0)
    model = GatedPyramid()
    images = torch.randn(2, 3, 16, 16)
    maps = dict(model.gates(images))
    maps["p3"].pow_(2)  # expect: GG001
    loss = fusion_loss(maps)
    loss.backward()
    print(loss.item())
