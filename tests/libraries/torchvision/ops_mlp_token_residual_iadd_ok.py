"""The twin of ops_mlp_token_residual_iadd.py, written out of place (`x = x + self.mlp(x)`): a new tensor, and what the library code saved stays as it was; it trains cleanly."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.ops import MLP


class TokenMixer(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mlp = MLP(dim, [32, dim], activation_layer=nn.GELU)
        self.out = nn.Linear(dim, vocab)

    def forward(self, ids):
        x = self.embed(ids)
        x = x + self.mlp(x)
        return self.out(x)


torch.manual_seed(0)
model = TokenMixer()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
ids = torch.randint(0, 20, (2, 6))
loss = F.cross_entropy(model(ids).flatten(0, 1), ids.flatten())
opt.zero_grad()
loss.backward()
opt.step()
