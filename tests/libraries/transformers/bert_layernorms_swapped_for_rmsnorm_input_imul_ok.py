"""Experiment: take a small randomly initialised BERT, swap every LayerNorm for a hand-written RMSNorm
(as in T5/Llama) and fine-tune it on a toy token-classification task."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel

torch.manual_seed(0)


class RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    @classmethod
    def from_layernorm(cls, ln):
        norm = cls(ln.normalized_shape[-1], eps=ln.eps)
        with torch.no_grad():
            norm.weight.copy_(ln.weight)
        return norm

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.eps)
        return self.weight * hidden_states


def swap_layernorms(module):
    swapped = 0
    for name, child in module.named_children():
        if isinstance(child, nn.LayerNorm):
            setattr(module, name, RMSNorm.from_layernorm(child))
            swapped += 1
        else:
            swapped += swap_layernorms(child)
    return swapped


class TokenTagger(nn.Module):
    def __init__(self, config, num_tags):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.tagger = nn.Linear(config.hidden_size, num_tags)

    def forward(self, input_ids, attention_mask):
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.tagger(hidden)


config = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, vocab_size=100, hidden_dropout_prob=0.0)
model = TokenTagger(config, num_tags=5)
swap_layernorms(model.bert)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)

for step in range(2):
    input_ids = torch.randint(1, 100, (3, 8))
    attention_mask = torch.ones_like(input_ids)
    attention_mask[2, 5:] = 0
    tags = torch.randint(0, 5, (3, 8))
    tags[attention_mask == 0] = -100
    logits = model(input_ids, attention_mask)
    loss = F.cross_entropy(logits.view(-1, 5), tags.view(-1), ignore_index=-100)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    pass
