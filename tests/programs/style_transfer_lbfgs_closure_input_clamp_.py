"""Neural style transfer optimises the input image with LBFGS; the closure clamps the image back
into [0, 1] in place without torch.no_grad(), but the image is a leaf that requires grad."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def gram_matrix(x):
    b, c, h, w = x.size()
    features = x.view(b * c, h * w)
    return torch.mm(features, features.t()).div(b * c * h * w)


class FeatureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU()),
            nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2)),
        ])

    def forward(self, x):
        feats = []
        for block in self.blocks:
            x = block(x)
            feats.append(x)
        return feats


def run_style_transfer(net, content_img, style_img, steps=2, style_weight=1e4):
    for p in net.parameters():
        p.requires_grad_(False)
    style_targets = [gram_matrix(f).detach() for f in net(style_img)]
    content_target = net(content_img)[-1].detach()
    input_img = content_img.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([input_img], max_iter=2)

    def closure():
        input_img.clamp_(0, 1)  # expect: GG002
        optimizer.zero_grad()
        feats = net(input_img)
        style_loss = sum(F.mse_loss(gram_matrix(f), t) for f, t in zip(feats, style_targets))
        loss = style_weight * style_loss + F.mse_loss(feats[-1], content_target)
        loss.backward()
        return loss

    for _ in range(steps):
        optimizer.step(closure)
    return input_img.detach()


torch.manual_seed(0)
run_style_transfer(FeatureNet().eval(), torch.rand(1, 3, 16, 16), torch.rand(1, 3, 16, 16))
