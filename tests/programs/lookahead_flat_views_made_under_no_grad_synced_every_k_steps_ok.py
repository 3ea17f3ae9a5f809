"""A hand-written Lookahead wrapper (k fast steps, then the slow weights pulled toward the fast
ones): flat views of the parameters made under no_grad are written at the k-th step,
which a counter the object keeps (`self.counter += 1`) decides: under `@torch.no_grad()`, allowed."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Lookahead:
    def __init__(self, base_opt, params, k=3, alpha=0.5):
        self.base = base_opt
        self.k = k
        self.alpha = alpha
        self.counter = 0
        self.params = list(params)
        with torch.no_grad():
            # flat views over the live parameters + a detached slow copy
            self.fast_flat = [p.view(-1) for p in self.params]
            self.slow_flat = [f.clone() for f in self.fast_flat]

    def zero_grad(self, set_to_none=True):
        self.base.zero_grad(set_to_none=set_to_none)

    def step(self):
        self.base.step()
        self.counter += 1
        if self.counter % self.k != 0:
            return False
        self.sync()
        return True

    @torch.no_grad()
    def sync(self):
        for fast, slow in zip(self.fast_flat, self.slow_flat):
            slow.add_(fast.detach() - slow, alpha=self.alpha)
            fast.copy_(slow)
        return None


def make_model(d_in=8, d_hidden=32, n_cls=3):
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.GELU(), nn.Linear(d_hidden, n_cls))


def train(steps=6, lr=0.05, seed=0):
    torch.manual_seed(seed)
    model = make_model()
    base = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    opt = Lookahead(base, model.parameters(), k=3, alpha=0.5)
    x = torch.randn(64, 8)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    history = []
    for step in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        synced = opt.step()
        history.append((step, loss.item(), synced))
    return history


if __name__ == "__main__":
    for step, loss, synced in train():
        print(f"step {step} loss {loss:.4f} synced={synced}")
