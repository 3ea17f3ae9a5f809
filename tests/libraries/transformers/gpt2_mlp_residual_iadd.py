"""A decoder layer adds transformers' GPT2MLP output onto the residual stream in place; the MLP's c_fc (Conv1D, `addmm`) saved that stream."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import GPT2Config
from transformers.models.gpt2.modeling_gpt2 import GPT2MLP


class TinyDecoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.mlp = GPT2MLP(4 * config.n_embd, config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, ids):
        h = self.wte(ids)
        h += self.mlp(h)  # expect: GG001
        return self.lm_head(h)


torch.manual_seed(0)
config = GPT2Config(vocab_size=40, n_embd=16, n_layer=1, n_head=2, resid_pdrop=0.0, bos_token_id=0, eos_token_id=0)
model = TinyDecoder(config)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
ids = torch.randint(0, 40, (2, 6))
loss = F.cross_entropy(model(ids).flatten(0, 1), ids.flatten())
opt.zero_grad()
loss.backward()
opt.step()
