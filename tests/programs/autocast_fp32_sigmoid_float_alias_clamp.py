"""Mixed precision, but the logits are taken to fp32 first: `sigmoid` then runs in fp32, and its
`.float()` is the same tensor. Clamping it changes the output sigmoid saved for backward."""
import torch
import torch.nn as nn

torch.manual_seed(0)
head = nn.Linear(8, 3)
features = torch.randn(4, 8)

with torch.autocast("cpu", dtype=torch.bfloat16):
    logits = head(features).float()
    probs = torch.sigmoid(logits).float()
    probs.clamp_(1e-4, 1 - 1e-4)  # expect: GG001
    loss = probs.log().mean()
loss.backward()
