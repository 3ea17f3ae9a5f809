"""A DistributedDataParallel training script re-initialises the classifier bias of the wrapped model
through `ddp_model.module` under `torch.no_grad()`, as a leaf that requires grad must be changed."""
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class TextClassifier(nn.Module):
    def __init__(self, vocab=100, dim=16, classes=3):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.classifier = nn.Linear(dim, classes)

    def forward(self, tokens, offsets):
        return self.classifier(self.embed(tokens, offsets))


def train(ddp_model, optimizer, batches):
    for step, (tokens, offsets, labels) in enumerate(batches):
        logits = ddp_model(tokens, offsets)
        loss = nn.functional.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == 0:
            with torch.no_grad():
                ddp_model.module.classifier.bias.fill_(0.0)


store = os.path.join(tempfile.mkdtemp(), "store")
dist.init_process_group("gloo", rank=0, world_size=1, init_method=f"file://{store}")
torch.manual_seed(0)
model = DDP(TextClassifier())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [(torch.randint(0, 100, (12,)), torch.tensor([0, 4, 8]), torch.randint(0, 3, (3,))) for _ in range(2)]
train(model, optimizer, batches)
dist.destroy_process_group()
