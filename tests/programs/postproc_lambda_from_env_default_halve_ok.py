"""A text classifier picks its feature post-processing lambda from an environment variable whose default is the out-of-place halving, so the tanh output that tanh saved is never changed in place."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, EMB, HID, CLASSES = 50, 16, 24, 3

POSTPROC = {
    "identity": lambda t: t,
    "halve": lambda t: t * 0.5,
    "sigmoid": lambda t: t.sigmoid_(),
}


def get_postproc(name=None):
    name = name or os.environ.get("FEATURE_POSTPROC", "halve")
    if name not in POSTPROC:
        raise KeyError(f"unknown post-processing {name!r}")
    return POSTPROC[name]


class BagOfEmbeddings(nn.Module):
    def __init__(self, postproc):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, EMB, padding_idx=0)
        self.proj = nn.Linear(EMB, HID)
        self.cls = nn.Linear(HID, CLASSES)
        self.postproc = postproc

    def pool(self, tokens):
        mask = (tokens != 0).float().unsqueeze(-1)
        summed = (self.emb(tokens) * mask).sum(1)
        return summed / mask.sum(1).clamp(min=1.0)

    def forward(self, tokens):
        feats = torch.tanh(self.proj(self.pool(tokens)))
        feats = self.postproc(feats)
        return self.cls(feats)


def batches(n_batches, batch_size=8, max_len=12):
    for _ in range(n_batches):
        lengths = torch.randint(3, max_len + 1, (batch_size,))
        tokens = torch.zeros(batch_size, max_len, dtype=torch.long)
        for i, n in enumerate(lengths.tolist()):
            tokens[i, :n] = torch.randint(1, VOCAB, (n,))
        labels = torch.randint(0, CLASSES, (batch_size,))
        yield tokens, labels


model = BagOfEmbeddings(get_postproc())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
running = 0.0
for step, (tokens, labels) in enumerate(batches(3)):
    logits = model(tokens)
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    running += loss.item()
print("mean loss", running / 3)
