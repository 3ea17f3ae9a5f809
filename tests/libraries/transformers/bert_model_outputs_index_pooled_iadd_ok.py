"""A classifier on BertModel takes the pooled output as `outputs[1]` (a ModelOutput's second field
that is not None) and adds a bias to it out of place: tanh's saved output is unchanged."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel


class Classifier(nn.Module):
    def __init__(self, config, num_labels=3):
        super().__init__()
        self.bert = BertModel(config)
        self.bias = nn.Parameter(torch.zeros(config.hidden_size))
        self.head = nn.Linear(config.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask=None):
        outputs = self.bert(input_ids=input_ids, attention_mask=attention_mask)
        pooled = outputs[1]
        pooled = pooled + self.bias
        return self.head(pooled)


torch.manual_seed(0)
config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
model = Classifier(config)
opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
ids = torch.randint(0, 100, (4, 9))
loss = F.cross_entropy(model(ids, torch.ones_like(ids)), torch.tensor([0, 2, 1, 1]))
opt.zero_grad()
loss.backward()
opt.step()
