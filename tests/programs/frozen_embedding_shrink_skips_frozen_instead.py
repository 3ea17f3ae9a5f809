"""A text classifier with a frozen pretrained embedding and a helper meant to shrink it after each step: its `continue` skips the frozen table instead of the trainable parameters, so it changes leaves that require grad in place outside no_grad and torch raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BagClassifier(nn.Module):
    def __init__(self, vocab=50, dim=16, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.hidden = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, tokens):
        h = self.embed(tokens).mean(dim=1)
        return self.out(torch.tanh(self.hidden(h)))


def shrink_frozen(model, factor):
    shrunk = 0
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        p.mul_(factor)  # expect: GG002
        shrunk += p.numel()
    return shrunk


def train(model, steps=4):
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    for step in range(steps):
        tokens = torch.randint(0, 50, (8, 6))
        labels = torch.randint(0, 3, (8,))
        loss = F.cross_entropy(model(tokens), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        shrunk = shrink_frozen(model, 0.99)
        print(f"step {step}: loss {loss.item():.3f}, {shrunk} frozen values shrunk")


if __name__ == "__main__":
    model = BagClassifier()
    model.embed.weight.requires_grad_(False)
    train(model)
