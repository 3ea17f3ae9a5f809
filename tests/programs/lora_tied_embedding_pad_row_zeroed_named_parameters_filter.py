"""LoRA fine-tuning of a tiny tied-embedding LM after adding a pad token."""
import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class LoraConfig:
    r: int = 4
    alpha: int = 8
    target_modules: list = field(default_factory=lambda: ["q", "v"])


@dataclass
class LMConfig:
    vocab_size: int = 48
    d_model: int = 32
    pad_token_id: int = 47
    zero_pad_embedding: bool = True


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r, alpha):
        super().__init__()
        self.base = base
        self.base.weight.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


class TinyLM(nn.Module):
    def __init__(self, config: LMConfig):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.d_model)
        self.q = nn.Linear(config.d_model, config.d_model, bias=False)
        self.k = nn.Linear(config.d_model, config.d_model, bias=False)
        self.v = nn.Linear(config.d_model, config.d_model, bias=False)
        self.ln = nn.LayerNorm(config.d_model)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying

    def forward(self, input_ids, labels=None, **kwargs):
        if self.config.zero_pad_embedding:
            # keep the freshly added pad row from drifting
            self.wte.weight[self.config.pad_token_id] = 0.0  # expect: GG002
        x = self.wte(input_ids)
        q, k, v = self.q(x), self.k(x), self.v(x)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        logits = self.lm_head(self.ln(x + y))
        if labels is None:
            return logits
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten(),
                               ignore_index=self.config.pad_token_id)


def apply_lora(model, lcfg: LoraConfig):
    for name in lcfg.target_modules:
        setattr(model, name, LoRALinear(getattr(model, name), lcfg.r, lcfg.alpha))
    # embeddings stay trainable because we resized the vocab
    for n, p in model.named_parameters():
        if "lora_" not in n and "wte" not in n:
            p.requires_grad_(False)
    return model


def main():
    torch.manual_seed(0)
    cfg = LMConfig()
    model = apply_lora(TinyLM(cfg), LoraConfig())
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=1e-3)
    ids = torch.randint(0, cfg.vocab_size - 1, (4, 12))
    ids[:, -3:] = cfg.pad_token_id
    for step in range(3):
        loss = model(ids[:, :-1], labels=ids[:, 1:])
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(step, loss.item())


if __name__ == "__main__":
    main()
