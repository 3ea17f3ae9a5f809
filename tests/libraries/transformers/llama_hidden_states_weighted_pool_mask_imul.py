"""Regression head on a small Llama (random weights) that mixes the last few hidden layers with
learned weights (the "WeightedLayerPooling" trick from Kaggle NLP notebooks) and mean-pools over tokens."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaModel

torch.manual_seed(0)


class WeightedLayerPooling(nn.Module):
    def __init__(self, num_layers, layer_start):
        super().__init__()
        self.layer_start = layer_start
        self.layer_weights = nn.Parameter(torch.ones(num_layers + 1 - layer_start))

    def forward(self, hidden_states, attention_mask):
        mask = attention_mask[:, :, None].to(hidden_states[0].dtype)
        for h in hidden_states[self.layer_start:]:
            h.mul_(mask)  # expect: GG001
        stacked = torch.stack(hidden_states[self.layer_start:], dim=0)
        weights = torch.softmax(self.layer_weights, dim=0)[:, None, None, None]
        mixed = (weights * stacked).sum(dim=0)
        return mixed.sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


class LlamaRegressor(nn.Module):
    def __init__(self, config, layer_start=0, num_targets=2):
        super().__init__()
        self.backbone = LlamaModel(config)
        self.pool = WeightedLayerPooling(config.num_hidden_layers, layer_start)
        self.head = nn.Sequential(nn.Dropout(0.1), nn.Linear(config.hidden_size, num_targets))

    def forward(self, input_ids, attention_mask):
        out = self.backbone(input_ids=input_ids, attention_mask=attention_mask,
                            output_hidden_states=True)
        return self.head(self.pool(out.hidden_states, attention_mask))


config = LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                     pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = LlamaRegressor(config)
optimizer = torch.optim.AdamW([
    {"params": model.backbone.parameters(), "lr": 2e-5},
    {"params": list(model.pool.parameters()) + list(model.head.parameters()), "lr": 1e-3},
])

input_ids = torch.randint(3, 100, (4, 9))
attention_mask = torch.ones_like(input_ids)
attention_mask[1, 6:] = 0
attention_mask[3, 4:] = 0
input_ids[attention_mask == 0] = config.pad_token_id
targets = torch.randn(4, 2)

for epoch in range(2):
    preds = model(input_ids, attention_mask)
    loss = F.smooth_l1_loss(preds, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
