"""LoRA wrappers replace the query/value nn.Linear of a tiny random BERT; a mid-step eval merges the adapters with weight.data += before backward, so backward silently uses the merged weights (wrong LoRA gradients)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertForSequenceClassification

torch.manual_seed(0)


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=4, alpha=8):
        super().__init__()
        self.base = base
        self.base.weight.requires_grad_(False)
        self.base.bias.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) * 0.1)
        self.lora_B = nn.Parameter(torch.randn(base.out_features, r) * 0.1)
        self.scaling = alpha / r
        self.merged = False

    def delta(self):
        return (self.lora_B @ self.lora_A) * self.scaling

    def merge(self):
        if not self.merged:
            self.base.weight.data += self.delta().detach()  # expect: GG004
            self.merged = True

    def unmerge(self):
        if self.merged:
            self.base.weight.data -= self.delta().detach()
            self.merged = False

    def forward(self, x):
        out = self.base(x)
        if not self.merged:
            out = out + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling
        return out


def inject_lora(model, targets=("query", "value")):
    for layer in model.bert.encoder.layer:
        attn = layer.attention.self
        for name in targets:
            setattr(attn, name, LoRALinear(getattr(attn, name)))
    return [m for m in model.modules() if isinstance(m, LoRALinear)]


def build():
    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                     vocab_size=100, num_labels=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = BertForSequenceClassification(cfg)
    return model, inject_lora(model)


def train_step(model, loras, ids, labels, val_ids, do_eval):
    loss = F.cross_entropy(model(input_ids=ids).logits, labels)
    if do_eval:
        with torch.no_grad():
            for m in loras:
                m.merge()
            val_pred = model(input_ids=val_ids).logits.argmax(-1)
    model.zero_grad()
    loss.backward()
    for m in loras:
        m.unmerge()
    return loss


if __name__ == "__main__":
    ids, labels = torch.randint(0, 100, (4, 9)), torch.tensor([0, 1, 1, 0])
    val_ids = torch.randint(0, 100, (4, 9))
    model, loras = build()
    train_step(model, loras, ids, labels, val_ids, do_eval=True)
    got = loras[0].lora_A.grad.clone()

    ref_model, ref_loras = build()
    train_step(ref_model, ref_loras, ids, labels, val_ids, do_eval=False)
    want = ref_loras[0].lora_A.grad
    rel = ((got - want).norm() / want.norm()).item()
    assert rel > 1e-3, "merge during the step should have corrupted the gradient"
