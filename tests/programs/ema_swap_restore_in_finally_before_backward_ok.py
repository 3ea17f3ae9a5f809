"""Image-classifier-style training loop on random features with an EMA copy of the weights; every few
steps the EMA weights are swapped into the model for a quick validation pass, then swapped back."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

cfg = {"steps": 4, "eval_every": 2, "ema_decay": 0.9, "lr": 0.05, "clip": 2.0}


class EMA:
    def __init__(self, model, decay):
        self.decay = decay
        self.shadow = {n: p.detach().clone() for n, p in model.named_parameters()}

    @torch.no_grad()
    def update(self, model):
        for n, p in model.named_parameters():
            self.shadow[n].mul_(self.decay).add_(p, alpha=1 - self.decay)


def swap_in(model, ema):
    backup = {}
    for n, p in model.named_parameters():
        backup[n] = p.data.clone()
        p.data.copy_(ema.shadow[n])
    return backup


def evaluate_with_ema(model, ema, batch, **kwargs):
    backup = swap_in(model, ema)
    x, y = batch
    try:
        with torch.no_grad():
            acc = (model(x).argmax(1) == y).float().mean().item()
        if kwargs.get("keep_ema", False):  # last eval: caller loads ema.shadow itself after the loop
            return acc
    finally:
        for n, p in model.named_parameters():
            p.data.copy_(backup[n])  # always restore, the caller may still need the live weights
    return acc


def compute_loss(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y, label_smoothing=0.1)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 5))
ema = EMA(model, cfg["ema_decay"])
opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
val_batch = (torch.randn(32, 16), torch.randint(0, 5, (32,)))

for step in range(1, cfg["steps"] + 1):
    batch = (torch.randn(32, 16), torch.randint(0, 5, (32,)))
    reference = copy.deepcopy(model)  # only used to check the gradient below
    loss = compute_loss(model, batch)
    if step % cfg["eval_every"] == 0:
        acc = evaluate_with_ema(model, ema, val_batch, keep_ema=(step == cfg["steps"]))
        print(f"step {step}: ema val acc {acc:.3f}")
    opt.zero_grad()
    loss.backward()
    got_g = model[0].weight.grad.clone()
    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["clip"])
    if step < cfg["steps"]:
        opt.step()
        ema.update(model)

compute_loss(reference, batch).backward()
ref_g = reference[0].weight.grad
assert torch.allclose(got_g, ref_g), "gradient does not match the reference"
print("max |grad - ref|:", (got_g - ref_g).abs().max().item())
