"""Custom autograd Function that flattens by returning a view; caller applies relu_ to its output."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FastFlatten(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.view(x.shape[0], -1)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out.reshape(ctx.shape)


class SmallConvNet(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 8 * 8, n_classes)

    def forward(self, img):
        h = self.conv(img)
        flat = FastFlatten.apply(h)
        flat.relu_()  # expect: GG003
        return self.fc(flat)


torch.manual_seed(0)
net = SmallConvNet()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for _ in range(2):
    img, y = torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))
    opt.zero_grad()
    loss = F.cross_entropy(net(img), y)
    loss.backward()
    opt.step()
