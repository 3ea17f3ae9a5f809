"""A regression head written as a subclass of transformers' BertPreTrainedModel (`post_init()` included) clips the pooled vector of its BertModel in place; the pooler's Tanh saved that output."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel, BertPreTrainedModel


class BertRegressor(BertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.bert = BertModel(config)
        self.regressor = nn.Linear(config.hidden_size, 1)
        self.post_init()

    def forward(self, input_ids):
        pooled = self.bert(input_ids).pooler_output
        pooled.clamp_(-0.9, 0.9)  # expect: GG001
        return self.regressor(pooled).squeeze(-1)


torch.manual_seed(0)
config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
model = BertRegressor(config)
opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
ids = torch.randint(0, 100, (4, 8))
targets = torch.randn(4)
loss = F.mse_loss(model(ids), targets)
opt.zero_grad()
loss.backward()
opt.step()
