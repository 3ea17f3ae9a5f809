"""Multi-stage conv backbone whose intermediate feature maps are produced by a
generator and L2-normalised for a multi-scale embedding loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_stage(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=2, padding=1),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
        nn.Conv2d(cout, cout, 3, padding=1),
    )


class L2Normalize:
    """Channel-wise L2 normalisation, usable as a plain callable."""

    def __init__(self, dim=1, eps=1e-6):
        self.dim = dim
        self.eps = eps

    def __call__(self, feat):
        norm = feat.norm(dim=self.dim, keepdim=True).clamp_min(self.eps)
        return feat.div_(norm)  # expect: GG001


class Backbone(nn.Module):
    def __init__(self, widths=(3, 16, 32, 64)):
        super().__init__()
        self.stages = nn.ModuleDict({
            f"stage{i + 1}": conv_stage(a, b) for i, (a, b) in enumerate(zip(widths[:-1], widths[1:]))
        })

    def iter_features(self, x, post=None):
        for name, stage in self.stages.items():
            x = stage(x)
            if post is not None:
                x = post(x)
            yield name, x


def multiscale_embedding_loss(feats_a, feats_b):
    loss = 0.0
    for name in feats_a:
        a = F.adaptive_avg_pool2d(feats_a[name], 1).flatten(1)
        b = F.adaptive_avg_pool2d(feats_b[name], 1).flatten(1)
        loss = loss + (1 - F.cosine_similarity(a, b)).mean()
    return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Backbone()
    normalize = L2Normalize()
    view_a = torch.randn(4, 3, 32, 32)
    view_b = view_a + 0.1 * torch.randn_like(view_a)

    feats_a = dict(model.iter_features(view_a, post=normalize))
    feats_b = dict(model.iter_features(view_b, post=normalize))
    for name, f in feats_a.items():
        print(name, tuple(f.shape))
    loss = multiscale_embedding_loss(feats_a, feats_b)
    loss.backward()
    print("loss", loss.item())
