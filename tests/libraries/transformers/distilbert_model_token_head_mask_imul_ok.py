"""The twin of distilbert_model_token_head_mask_imul.py, written out of place (`hidden = hidden * mask`): the hidden states the tagging head saved stay as they were; it trains cleanly."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import DistilBertConfig, DistilBertModel


class JointTagger(nn.Module):
    def __init__(self, config, num_tags, num_labels):
        super().__init__()
        self.distilbert = DistilBertModel(config)
        self.tagger = nn.Linear(config.dim, num_tags)
        self.classifier = nn.Linear(config.dim, num_labels)

    def forward(self, input_ids, attention_mask):
        hidden = self.distilbert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        tag_logits = self.tagger(hidden)
        hidden = hidden * attention_mask.unsqueeze(-1)
        pooled = hidden.sum(1) / attention_mask.sum(1, keepdim=True)
        return tag_logits, self.classifier(pooled)


torch.manual_seed(0)
config = DistilBertConfig(vocab_size=100, dim=32, n_layers=1, n_heads=2, hidden_dim=64)
model = JointTagger(config, num_tags=5, num_labels=2)
opt = torch.optim.AdamW(model.parameters(), lr=5e-5)
ids = torch.randint(0, 100, (2, 8))
mask = torch.tensor([[1.0] * 8, [1.0] * 5 + [0.0] * 3])
tags = torch.randint(0, 5, (2, 8))
labels = torch.tensor([0, 1])
tag_logits, logits = model(ids, mask)
loss = F.cross_entropy(tag_logits.flatten(0, 1), tags.flatten()) + F.cross_entropy(logits, labels)
opt.zero_grad()
loss.backward()
opt.step()
