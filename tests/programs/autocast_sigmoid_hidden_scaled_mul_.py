"""Mixed precision on CPU: under autocast, the hidden sigmoid activations are scaled in place
before the last layer; sigmoid saved its output (a fresh tensor, autocast or not)."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(12, 12), nn.Sigmoid(), nn.Linear(12, 2))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu", enabled=True)


def run(batch):
    x, y = batch
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=True):
        h = model[1](model[0](x))
        h.mul_(2.0)  # expect: GG001
        out = model[2](h)
        loss = nn.functional.mse_loss(out, y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad(set_to_none=True)


for _ in range(2):
    run((torch.randn(5, 12), torch.randn(5, 2)))
