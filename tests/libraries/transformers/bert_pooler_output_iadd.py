"""A sentence-pair head pools hidden states with transformers' BertPooler (Linear + Tanh) and adds a bias in place to the pooled vector; tanh's backward needs its output."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig
from transformers.models.bert.modeling_bert import BertPooler


class PairClassifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.pooler = BertPooler(config)
        self.bias = nn.Parameter(torch.zeros(config.hidden_size))
        self.classifier = nn.Linear(config.hidden_size, 2)

    def forward(self, input_ids):
        pooled = self.pooler(self.embed(input_ids))
        pooled += self.bias  # expect: GG001
        return self.classifier(pooled)


torch.manual_seed(0)
config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
model = PairClassifier(config)
opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
ids = torch.randint(0, 50, (2, 7))
labels = torch.tensor([0, 1])
loss = F.cross_entropy(model(ids), labels)
opt.zero_grad()
loss.backward()
opt.step()
