"""A forward hook on BertForSequenceClassification's pooler activation (an `nn.Tanh`) masks the
pooled features by returning a new tensor, which replaces the module's output: tanh's saved output
is unchanged."""
import torch
import torch.nn as nn
from transformers import BertConfig, BertForSequenceClassification

torch.manual_seed(0)

config = BertConfig(
    vocab_size=100,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=64,
    max_position_embeddings=64,
    num_labels=3,
)
model = BertForSequenceClassification(config)
model.train()

keep = torch.ones(config.hidden_size)
keep[::4] = 0.0


def mask_pooled(module, inputs, output):
    # zero out the selected dims of the tanh output: a new tensor the module call returns
    return output * keep


handle = model.bert.pooler.activation.register_forward_hook(mask_pooled)

optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)

input_ids = torch.randint(0, 100, (4, 12))
attention_mask = torch.ones_like(input_ids)
attention_mask[2, 8:] = 0
labels = torch.tensor([0, 2, 1, 1])

outputs = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
loss = outputs.loss
loss.backward()
optimizer.step()
optimizer.zero_grad()
handle.remove()
