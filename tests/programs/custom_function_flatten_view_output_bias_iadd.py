"""A custom Function's forward returns a flattened view of a tensor it computed; adding the bias to that
output in place is refused by torch: the view was created inside a custom Function."""
import torch
import torch.nn as nn


class ScaledFlatten(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        ctx.shape = x.shape
        return (x * scale).view(x.shape[0], -1)

    @staticmethod
    def backward(ctx, grad):
        return grad.view(ctx.shape) * ctx.scale, None


class Head(nn.Module):
    def __init__(self, channels, size, n_cls):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.bias = nn.Parameter(torch.zeros(channels * size * size))
        self.fc = nn.Linear(channels * size * size, n_cls)

    def forward(self, x):
        flat = ScaledFlatten.apply(self.conv(x), 0.5)
        flat += self.bias  # expect: GG003
        return self.fc(flat)


torch.manual_seed(0)
model = Head(4, 6, 3)
x, y = torch.randn(2, 3, 6, 6), torch.tensor([0, 2])
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
print("ok", float(loss))
