"""A contrastive step normalises its embeddings in place for logging after `F.cosine_similarity`
saved them: the similarity's backward reads the changed `anchor` (torch's composite saves x1, x2)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def contrastive_step(encoder, optimizer, views, positives, temperature=0.1):
    anchor = encoder(views)
    positive = encoder(positives)
    sim = F.cosine_similarity(anchor, positive, dim=-1) / temperature
    anchor.div_(anchor.norm(dim=-1, keepdim=True))  # expect: GG001
    loss = -sim.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return anchor


torch.manual_seed(0)
encoder = nn.Linear(16, 8)
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
contrastive_step(encoder, optimizer, torch.randn(4, 16), torch.randn(4, 16))
