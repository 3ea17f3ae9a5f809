"""The twin of gpt2_model_last_hidden_state_value_head_iadd.py, written out of place (`hidden = hidden + self.value_bias`): the hidden states the LM head saved stay as they were; it trains cleanly."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import GPT2Config, GPT2Model


class PolicyWithValueHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transformer = GPT2Model(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.value_bias = nn.Parameter(torch.zeros(config.n_embd))
        self.value_head = nn.Linear(config.n_embd, 1)

    def forward(self, input_ids):
        hidden = self.transformer(input_ids).last_hidden_state
        logits = self.lm_head(hidden)
        hidden = hidden + self.value_bias
        values = self.value_head(hidden).squeeze(-1)
        return logits, values


torch.manual_seed(0)
config = GPT2Config(vocab_size=40, n_embd=16, n_layer=1, n_head=2, n_positions=32, bos_token_id=0, eos_token_id=0)
model = PolicyWithValueHead(config)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, 40, (2, 6))
returns = torch.randn(2, 6)
logits, values = model(ids)
loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten()) + F.mse_loss(values, returns)
opt.zero_grad()
loss.backward()
opt.step()
