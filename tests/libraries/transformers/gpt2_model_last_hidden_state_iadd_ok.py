"""A prefix-conditioned LM adds a learned offset in place onto `last_hidden_state` of a whole transformers GPT2Model before its LM head reads it: that is the output of the final LayerNorm (`ln_f`), which saves its input, not its output, so training runs cleanly."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import GPT2Config, GPT2Model


class OffsetLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transformer = GPT2Model(config)
        self.offset = nn.Parameter(torch.zeros(config.n_embd))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, input_ids):
        hidden = self.transformer(input_ids).last_hidden_state
        hidden += self.offset
        return self.lm_head(hidden)


torch.manual_seed(0)
config = GPT2Config(vocab_size=40, n_embd=16, n_layer=1, n_head=2, n_positions=32, bos_token_id=0, eos_token_id=0)
model = OffsetLM(config)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, 40, (2, 6))
logits = model(ids)
loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten())
opt.zero_grad()
loss.backward()
opt.step()
