"""The twin of bert_model_pooler_output_iadd.py, written out of place (`pooled = pooled + ...`): a new tensor, and the output the pooler's Tanh saved stays as it was; it trains cleanly."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel


class MultiTaskClassifier(nn.Module):
    def __init__(self, config, num_tasks, num_labels):
        super().__init__()
        self.bert = BertModel(config)
        self.task_embedding = nn.Embedding(num_tasks, config.hidden_size)
        self.classifier = nn.Linear(config.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask, task_ids):
        outputs = self.bert(input_ids=input_ids, attention_mask=attention_mask)
        pooled = outputs.pooler_output
        pooled = pooled + self.task_embedding(task_ids)
        return self.classifier(pooled)


torch.manual_seed(0)
config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
model = MultiTaskClassifier(config, num_tasks=3, num_labels=2)
opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
ids = torch.randint(0, 100, (2, 8))
mask = torch.ones(2, 8, dtype=torch.long)
tasks = torch.tensor([0, 2])
labels = torch.tensor([1, 0])
loss = F.cross_entropy(model(ids, mask, tasks), labels)
opt.zero_grad()
loss.backward()
opt.step()
