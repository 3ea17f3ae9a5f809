"""A GPT-2 language model with an auxiliary logit penalty: both losses backpropagate before the optimizer steps."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(vocab_size=100, n_positions=32, n_embd=32, n_layer=2, n_head=2)
model = GPT2LMHeadModel(config)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.train()
for step in range(2):
    ids = torch.randint(0, 100, (2, 8))
    outputs = model(input_ids=ids, labels=ids)
    penalty = outputs.logits.pow(2).mean()
    optimizer.zero_grad()
    penalty.backward(retain_graph=True)
    outputs.loss.backward()
    optimizer.step()
