"""The multi-task trainer collects a dict of per-task losses over its ModuleDict heads, sums them, and steps once after the single backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TASKS = {"age": 1, "gender": 2, "emotion": 5}


class MultiTaskNet(nn.Module):
    def __init__(self, d_in=12, hidden=24):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, hidden), nn.ELU(inplace=True), nn.Linear(hidden, hidden), nn.ELU())
        self.heads = nn.ModuleDict({name: nn.Linear(hidden, n_out) for name, n_out in TASKS.items()})

    def forward(self, x):
        shared = self.trunk(x)
        return {name: head(shared) for name, head in self.heads.items()}


def task_loss(name, pred, target):
    if name == "age":
        return F.smooth_l1_loss(pred.squeeze(-1), target)
    return F.cross_entropy(pred, target)


def train_step(model, opt, x, targets, weights=None):
    weights = weights or {name: 1.0 for name in TASKS}
    outputs = model(x)
    losses = {name: weights[name] * task_loss(name, pred, targets[name]) for name, pred in outputs.items()}
    total = sum(losses.values())
    opt.zero_grad()
    total.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    return {k: v.item() for k, v in losses.items()}


torch.manual_seed(0)
model = MultiTaskNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
for epoch in range(2):
    x = torch.randn(16, 12)
    targets = {"age": torch.rand(16) * 80, "gender": torch.randint(0, 2, (16,)), "emotion": torch.randint(0, 5, (16,))}
    print(train_step(model, opt, x, targets))
    sched.step()
