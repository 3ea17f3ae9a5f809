"""The same contrastive step normalises its embeddings for logging once backward has run: the
saves of `F.cosine_similarity` are freed by then."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def contrastive_step(encoder, optimizer, views, positives, temperature=0.1):
    anchor = encoder(views)
    positive = encoder(positives)
    sim = F.cosine_similarity(anchor, positive, dim=-1) / temperature
    loss = -sim.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    anchor.detach().div_(anchor.norm(dim=-1, keepdim=True).detach())
    return anchor


torch.manual_seed(0)
encoder = nn.Linear(16, 8)
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
contrastive_step(encoder, optimizer, torch.randn(4, 16), torch.randn(4, 16))
