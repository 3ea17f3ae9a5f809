"""A pre-norm block adds the MLP of LlamaRMSNorm(x) onto x in place; the norm's `pow` and `hidden_states * rsqrt(...)` saved x (`.to(torch.float32)` of a float32 tensor is the tensor itself)."""
import torch
import torch.nn as nn
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaMLP, LlamaRMSNorm


class PreNormBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed = nn.Linear(4, config.hidden_size)
        self.norm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.mlp = LlamaMLP(config)

    def forward(self, x):
        x = self.embed(x)
        x += self.mlp(self.norm(x))  # expect: GG001
        return x


torch.manual_seed(0)
config = LlamaConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, vocab_size=32)
block = PreNormBlock(config)
opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
x = torch.randn(2, 5, 4)
loss = block(x).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
