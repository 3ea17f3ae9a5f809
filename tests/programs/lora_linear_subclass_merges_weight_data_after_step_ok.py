"""loralib-style LoRA fine-tuning of a small MLP language model: LoRA linears merge their adapters
into the frozen weight on .eval() and unmerge on .train(); validation runs after each optimizer step."""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LoRALinear(nn.Linear):
    def __init__(self, in_features, out_features, r=4, lora_alpha=8, merge_weights=True):
        super().__init__(in_features, out_features)
        self.r, self.scaling = r, lora_alpha / r
        self.merge_weights, self.merged = merge_weights, False
        self.lora_A = nn.Parameter(self.weight.new_zeros((r, in_features)))
        self.lora_B = nn.Parameter(self.weight.new_zeros((out_features, r)))
        self.weight.requires_grad = False
        self.bias.requires_grad = False
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        with torch.no_grad():
            self.lora_B.zero_()

    def train(self, mode: bool = True):
        super().train(mode)
        if mode and self.merge_weights and self.merged:
            self.weight.data -= (self.lora_B @ self.lora_A) * self.scaling
            self.merged = False
        elif not mode and self.merge_weights and not self.merged:
            self.weight.data += (self.lora_B @ self.lora_A) * self.scaling
            self.merged = True
        return self

    def forward(self, x):
        result = F.linear(x, self.weight, self.bias)
        if not self.merged:
            result = result + (x @ self.lora_A.T @ self.lora_B.T) * self.scaling
        return result


class MLPLanguageModel(nn.Module):
    def __init__(self, vocab=40, ctx=6, d=32, hidden=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.fc1 = LoRALinear(ctx * d, hidden)
        self.fc2 = LoRALinear(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)
        self.emb.weight.requires_grad = False

    def forward(self, ctx_ids):
        x = self.emb(ctx_ids).flatten(1)
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.out(x)


def lm_loss(model, batch):
    ctx_ids, target = batch
    return F.cross_entropy(model(ctx_ids), target)


@torch.no_grad()
def evaluate(model, batch):
    model.eval()
    return lm_loss(model, batch).item()


torch.manual_seed(0)
model = MLPLanguageModel()
params = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.Adam(params, lr=1e-2)
train_batch = (torch.randint(0, 40, (16, 6)), torch.randint(0, 40, (16,)))
val_batch = (torch.randint(0, 40, (16, 6)), torch.randint(0, 40, (16,)))
eval_interval = 2

for step in range(4):
    model.train()
    reference = copy.deepcopy(model)
    lm_loss(reference, train_batch).backward()
    loss = lm_loss(model, train_batch)
    optimizer.zero_grad()
    loss.backward()
    g, g_ref = model.fc1.lora_A.grad, reference.fc1.lora_A.grad
    assert torch.allclose(g, g_ref), "LoRA gradient mismatch"
    optimizer.step()
    print(f"step {step}: train loss {loss.item():.4f}")
    if step % eval_interval == 0 and step > 0:
        print(f"step {step}: val loss {evaluate(model, val_batch):.4f}")
