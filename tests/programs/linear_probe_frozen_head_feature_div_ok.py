"""With the classifier frozen (a fixed linear probe) Linear keeps no reference to its input, so dividing the features in place by their no_grad norms afterwards is safe."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self, d_in, dim):
        super().__init__()
        self.layers = nn.Sequential(*[m for i in range(2) for m in (nn.Linear(d_in if i == 0 else dim, dim), nn.SiLU())])

    def forward(self, x):
        return self.layers(x)


class EmbeddingNet(nn.Module):
    def __init__(self, d_in=10, dim=16, n_cls=5):
        super().__init__()
        self.backbone = Backbone(d_in, dim)
        self.classifier = nn.Linear(dim, n_cls)
        self.classifier.requires_grad_(False)

    def forward(self, x):
        feats = self.backbone(x)
        logits = self.classifier(feats)
        with torch.no_grad():
            norms = feats.norm(dim=1, keepdim=True).clamp_min(1e-6)
        feats.div_(norms)
        return logits, feats


def triplet_from_labels(emb, labels, margin=0.2):
    sim = emb @ emb.t()
    same = labels[:, None] == labels[None, :]
    pos = sim.masked_fill(~same, 2.0).min(dim=1).values
    neg = sim.masked_fill(same, -2.0).max(dim=1).values
    return F.relu(neg - pos + margin).mean()


torch.manual_seed(0)
model = EmbeddingNet()
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1, momentum=0.9)
x, y = torch.randn(12, 10), torch.randint(0, 5, (12,))
logits, emb = model(x)
losses = {"ce": F.cross_entropy(logits, y), "triplet": triplet_from_labels(emb, y)}
opt.zero_grad()
sum(losses.values()).backward()
opt.step()
