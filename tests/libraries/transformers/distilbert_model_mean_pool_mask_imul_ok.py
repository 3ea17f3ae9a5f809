"""A sentence encoder zeroes the padding of a whole transformers DistilBertModel's `last_hidden_state` in place before mean pooling: that is the output of the last block's LayerNorm, which saves its input, not its output, so training runs cleanly."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import DistilBertConfig, DistilBertModel


class MeanPoolEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.distilbert = DistilBertModel(config)

    def forward(self, input_ids, attention_mask):
        hidden = self.distilbert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        hidden *= attention_mask.unsqueeze(-1)
        return hidden.sum(1) / attention_mask.sum(1, keepdim=True)


torch.manual_seed(0)
config = DistilBertConfig(vocab_size=100, dim=32, n_layers=1, n_heads=2, hidden_dim=64)
encoder = MeanPoolEncoder(config)
opt = torch.optim.AdamW(encoder.parameters(), lr=5e-5)
ids = torch.randint(0, 100, (4, 8))
mask = torch.tensor([[1.0] * 8, [1.0] * 6 + [0.0] * 2, [1.0] * 8, [1.0] * 4 + [0.0] * 4])
emb = F.normalize(encoder(ids, mask), dim=-1)
loss = F.cross_entropy(emb @ emb.T / 0.05, torch.arange(4))
opt.zero_grad()
loss.backward()
opt.step()
