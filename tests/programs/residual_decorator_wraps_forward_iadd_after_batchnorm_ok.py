"""Tiny CIFAR-style ResNet where the skip connection is added by a `@residual`
decorator around each block's forward, trained for one step on random images."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


def residual(fn):
    """Add the (projected) block input onto the block output, then apply the final ReLU."""
    @functools.wraps(fn)
    def wrapper(self, x, *args, **kwargs):
        identity = self.shortcut(x) if hasattr(self, "shortcut") else x
        out = fn(self, x, *args, **kwargs)
        out += identity
        return F.relu(out)
    return wrapper


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(cout),
    )


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = conv_bn(cin, cout, stride)
        self.conv2 = conv_bn(cout, cout)
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                          nn.BatchNorm2d(cout))

    @residual
    def forward(self, x):
        out = F.relu(self.conv1(x))
        return self.conv2(out)


def clamp_bn_outputs(model, limit=6.0):
    """Register forward hooks that clip every BatchNorm output to [-limit, limit]."""
    def hook(module, inputs, output):
        output.clamp_(-limit, limit)
    return [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, nn.BatchNorm2d)]


class TinyResNet(nn.Module):
    def __init__(self, widths=(16, 32, 64), num_classes=10):
        super().__init__()
        self.stem = conv_bn(3, widths[0])
        layers, cin = [], widths[0]
        for i, w in enumerate(widths):
            layers.append(BasicBlock(cin, w, stride=1 if i == 0 else 2))
            cin = w
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = F.relu(self.stem(x))
        x = self.layers(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyResNet()
    handles = clamp_bn_outputs(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    images = torch.randn(8, 3, 32, 32)
    labels = torch.randint(0, 10, (8,))
    loss = F.cross_entropy(model(images), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    for h in handles:
        h.remove()
    print("loss", loss.item())
