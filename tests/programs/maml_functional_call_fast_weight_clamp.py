"""MAML on sine regression with torch.func.functional_call: the inner loop clamps the fast weights in place after autograd.grad(create_graph=True) saved them, so the meta-backward raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)

CFG = dict(inner_steps=2, inner_lr=0.01, meta_lr=1e-3, tasks_per_batch=4, weight_clip=3.0)


class SineNet(nn.Module):
    def __init__(self, hidden=40):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(1, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x)


def sample_task(n_support=10, n_query=15):
    amp = torch.empty(1).uniform_(0.1, 5.0)
    phase = torch.empty(1).uniform_(0.0, 3.14)
    xs = torch.empty(n_support, 1).uniform_(-5, 5)
    xq = torch.empty(n_query, 1).uniform_(-5, 5)
    return xs, amp * torch.sin(xs + phase), xq, amp * torch.sin(xq + phase)


def adapt(model, xs, ys, cfg):
    # start from a copy of the meta-parameters so the inner loop stays differentiable
    fast = {name: p.clone() for name, p in model.named_parameters()}
    for step in range(cfg["inner_steps"]):
        pred = functional_call(model, fast, (xs,))
        loss = F.mse_loss(pred, ys)
        grads = torch.autograd.grad(loss, list(fast.values()), create_graph=True)
        # keep the adapted weights bounded, the inner lr sometimes blows them up
        for name, w in fast.items():
            if name.endswith("weight"):
                w.clamp_(-cfg["weight_clip"], cfg["weight_clip"])  # expect: GG001
        fast = {name: w - cfg["inner_lr"] * g for (name, w), g in zip(fast.items(), grads)}
    return fast


def meta_train(model, meta_opt, iterations, cfg):
    history = []
    for it in range(iterations):
        meta_opt.zero_grad()
        meta_loss = 0
        for _ in range(cfg["tasks_per_batch"]):
            xs, ys, xq, yq = sample_task()
            fast = adapt(model, xs, ys, cfg)
            q_pred = functional_call(model, fast, (xq,))
            meta_loss = meta_loss + F.mse_loss(q_pred, yq)
        meta_loss = meta_loss / cfg["tasks_per_batch"]
        meta_loss.backward()
        meta_opt.step()
        history.append(meta_loss.item())
    return history


if __name__ == "__main__":
    model = SineNet()
    meta_opt = torch.optim.Adam(model.parameters(), lr=CFG["meta_lr"])
    losses = meta_train(model, meta_opt, iterations=3, cfg=CFG)
    print("meta losses:", [round(l, 4) for l in losses])
