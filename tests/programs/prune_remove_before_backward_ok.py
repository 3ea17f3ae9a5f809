"""Fine-tune-then-prune recipe for a tiny text classifier: prune the projection, run a last epoch, and make pruning permanent at the end."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune


class BagOfWords(nn.Module):
    def __init__(self, vocab=200, dim=32, n_cls=3):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.proj = nn.Linear(dim, dim)
        self.cls = nn.Linear(dim, n_cls)

    def forward(self, ids):
        return self.cls(torch.relu(self.proj(self.emb(ids))))


def finalize_pruning(model):
    for mod in (model.proj, model.cls):
        if prune.is_pruned(mod):
            prune.remove(mod, "weight")


if __name__ == "__main__":
    torch.manual_seed(0)
    ids = torch.randint(0, 200, (40, 10))
    y = torch.randint(0, 3, (40,))
    model = BagOfWords()
    prune.random_unstructured(model.proj, "weight", amount=0.4)
    prune.l1_unstructured(model.cls, "weight", amount=0.2)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    n_epochs = 3
    for epoch in range(n_epochs):
        loss = F.cross_entropy(model(ids), y)
        if epoch == n_epochs - 1:
            finalize_pruning(model)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(epoch, loss.item(), [n for n, _ in model.named_buffers()])
    assert not prune.is_pruned(model)
