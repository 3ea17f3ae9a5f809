"""Gradient accumulation rescales p.grad in place, clips each grad with clamp_, then clip_grad_norm_, steps a warmup scheduler and zeroes grads: in-place writes on .grad never touch saved tensors."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvMixer(nn.Module):
    def __init__(self, dim=8, depth=2, n_cls=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dim, 2, 2), nn.GELU(), nn.BatchNorm2d(dim))
        self.mixers = nn.ModuleList(
            nn.Sequential(nn.Conv2d(dim, dim, 3, padding=1, groups=dim), nn.GELU(), nn.BatchNorm2d(dim)) for _ in range(depth))
        self.head = nn.Linear(dim, n_cls)

    def forward(self, x):
        x = self.stem(x)
        for mixer in self.mixers:
            x = x + mixer(x)
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


def train(model, batches, accum_steps=2, clip_value=0.5, warmup=2):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / warmup))
    for i, (x, y) in enumerate(batches):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if (i + 1) % accum_steps == 0:
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.div_(accum_steps)
                    p.grad.clamp_(-clip_value, clip_value)
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=False)


torch.manual_seed(0)
model = ConvMixer()
train(model, [(torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))) for _ in range(4)])
