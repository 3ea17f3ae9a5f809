"""Mixed precision: the head's probabilities are taken to fp32 before clamping for a stable log.

Under CPU autocast the linear layer runs in bf16, so `sigmoid` (which keeps its input's precision)
gives bf16, and `.float()` makes an fp32 copy: clamping the copy leaves sigmoid's saved output alone.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
head = nn.Linear(8, 3)
features = torch.randn(4, 8)
targets = torch.rand(4, 3)

with torch.autocast("cpu", dtype=torch.bfloat16):
    logits = head(features)
    probs = torch.sigmoid(logits).float()
    probs.clamp_(1e-4, 1 - 1e-4)
    loss = -(targets * probs.log() + (1 - targets) * (1 - probs).log()).mean()
loss.backward()
print(head.weight.grad.norm())
