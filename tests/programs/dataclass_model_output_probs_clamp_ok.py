"""A classifier returns a dataclass output (in the style of Hugging Face's ModelOutput) holding the
softmax probabilities; the training loop clamps them out of place before taking the log for its loss,
so the probabilities softmax saved keep their values."""
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ClassifierOutput:
    logits: torch.Tensor
    probs: torch.Tensor
    hidden: Optional[torch.Tensor] = None


class Classifier(nn.Module):
    def __init__(self, d_in=10, hidden=32, n_classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        h = self.body(x)
        logits = self.head(h)
        return ClassifierOutput(logits=logits, probs=F.softmax(logits, dim=-1), hidden=h)


def train(model, batches, eps=1e-6):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in batches:
        out = model(x)
        loss = F.nll_loss(out.probs.clamp(min=eps).log(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
train(Classifier(), [(torch.randn(8, 10), torch.randint(0, 4, (8,))) for _ in range(2)])
