"""A SimCSE-style sentence encoder on a whole transformers RobertaModel divides `pooler_output` by its norm in place; the pooler's Tanh saved that output (and `norm` its input)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import RobertaConfig, RobertaModel


class SentenceEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.roberta = RobertaModel(config)

    def forward(self, input_ids, attention_mask):
        emb = self.roberta(input_ids, attention_mask=attention_mask).pooler_output
        emb /= emb.norm(dim=-1, keepdim=True)  # expect: GG001
        return emb


def contrastive_loss(encoder, ids, mask, temperature=0.05):
    first, second = encoder(ids, mask), encoder(ids, mask)  # two dropout views of each sentence
    logits = first @ second.T / temperature
    return F.cross_entropy(logits, torch.arange(ids.shape[0]))


torch.manual_seed(0)
config = RobertaConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
encoder = SentenceEncoder(config)
opt = torch.optim.AdamW(encoder.parameters(), lr=3e-5)
ids = torch.randint(3, 100, (4, 8))
mask = torch.ones(4, 8, dtype=torch.long)
loss = contrastive_loss(encoder, ids, mask)
opt.zero_grad()
loss.backward()
opt.step()
