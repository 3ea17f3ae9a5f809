"""A multi-task trainer loops over a ModuleDict of heads, backpropagating each task with retain_graph and stepping one shared optimizer per task; the next task's backward needs the trunk weights that step changed."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TASKS = {"age": 1, "gender": 2, "emotion": 5}


class MultiTaskNet(nn.Module):
    def __init__(self, d_in=12, hidden=24):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, hidden), nn.ELU(), nn.Linear(hidden, hidden), nn.ELU())
        self.heads = nn.ModuleDict({name: nn.Linear(hidden, n_out) for name, n_out in TASKS.items()})

    def forward(self, x):
        shared = self.trunk(x)
        return {name: head(shared) for name, head in self.heads.items()}


def task_loss(name, pred, target):
    if name == "age":
        return F.smooth_l1_loss(pred.squeeze(-1), target)
    return F.cross_entropy(pred, target)


def train_step(model, opt, x, targets):
    outputs = model(x)
    logs = {}
    for i, (name, pred) in enumerate(outputs.items()):
        loss = task_loss(name, pred, targets[name])
        opt.zero_grad()
        loss.backward(retain_graph=i < len(outputs) - 1)
        opt.step()  # expect: GG001
        logs[name] = loss.item()
    return logs


torch.manual_seed(0)
model = MultiTaskNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(16, 12)
targets = {"age": torch.rand(16) * 80, "gender": torch.randint(0, 2, (16,)), "emotion": torch.randint(0, 5, (16,))}
print(train_step(model, opt, x, targets))
