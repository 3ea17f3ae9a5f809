"""Frozen pretrained embedding kept inside a max-norm box by a user parametrization that clamps
the (non-trainable) original in place, while a trainable head on top is fitted."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize


class BoxClamp(nn.Module):
    def __init__(self, bound):
        super().__init__()
        self.bound = bound

    def forward(self, W):
        return W.clamp_(-self.bound, self.bound)


class BagClassifier(nn.Module):
    def __init__(self, vocab=50, dim=8, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.emb.weight.requires_grad_(False)
        parametrize.register_parametrization(self.emb, "weight", BoxClamp(0.5))
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        return self.head(self.emb(tokens).mean(dim=1))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = BagClassifier()
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    for step in range(3):
        tokens = torch.randint(0, 50, (6, 7))
        labels = torch.randint(0, 3, (6,))
        loss = F.cross_entropy(model(tokens), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, loss.item())
