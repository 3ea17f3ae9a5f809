"""A retrieval model imports `vector_norm` from `torch.linalg` and scales its query embeddings by a
learned temperature in place: `q *= self.scale` changes the input `vector_norm` saved for backward."""
import torch
import torch.nn as nn
from torch.linalg import vector_norm


class DualEncoder(nn.Module):
    def __init__(self, dim=24):
        super().__init__()
        self.query = nn.Linear(dim, dim)
        self.doc = nn.Linear(dim, dim)
        self.scale = nn.Parameter(torch.tensor(5.0))

    def forward(self, queries, docs):
        q = self.query(queries)
        d = self.doc(docs)
        q_norm = vector_norm(q, dim=-1, keepdim=True)
        d = d / vector_norm(d, dim=-1, keepdim=True)
        q *= self.scale  # expect: GG001
        return (q / q_norm) @ d.T


torch.manual_seed(0)
model = DualEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scores = model(torch.randn(6, 24), torch.randn(6, 24))
loss = nn.functional.cross_entropy(scores, torch.arange(6))
loss.backward()
optimizer.step()
