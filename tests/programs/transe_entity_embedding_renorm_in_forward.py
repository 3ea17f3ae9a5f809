"""A TransE knowledge-graph model renormalises its entity embeddings at the start of every forward
by dividing the weight in place, outside torch.no_grad(): the weight is a leaf that requires grad."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TransE(nn.Module):
    def __init__(self, n_entities, n_relations, dim=16, margin=1.0):
        super().__init__()
        self.entities = nn.Embedding(n_entities, dim)
        self.relations = nn.Embedding(n_relations, dim)
        self.margin = margin
        nn.init.xavier_uniform_(self.entities.weight)
        nn.init.xavier_uniform_(self.relations.weight)

    def score(self, heads, rels, tails):
        return (self.entities(heads) + self.relations(rels) - self.entities(tails)).norm(p=1, dim=-1)

    def forward(self, positive, negative):
        weight = self.entities.weight
        weight.div_(weight.norm(dim=1, keepdim=True))  # expect: GG002
        pos = self.score(*positive.unbind(1))
        neg = self.score(*negative.unbind(1))
        return F.relu(self.margin + pos - neg).mean()


def corrupt(triples, n_entities):
    corrupted = triples.clone()
    corrupted[:, 2] = torch.randint(0, n_entities, (triples.shape[0],))
    return corrupted


torch.manual_seed(0)
model = TransE(n_entities=50, n_relations=5)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
triples = torch.stack([torch.randint(0, 50, (32,)), torch.randint(0, 5, (32,)), torch.randint(0, 50, (32,))], 1)
for _ in range(2):
    loss = model(triples, corrupt(triples, 50))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
