"""EMA evaluation between forward and backward where the live weights are backed up with torch.clone(p.data) and copied back before backward."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F


class WeightEMA:
    def __init__(self, model, decay=0.95):
        self.decay = decay
        self.shadow = [torch.clone(p.detach()) for p in model.parameters()]
        self.backup = []

    @torch.no_grad()
    def update(self, model):
        for s, p in zip(self.shadow, model.parameters()):
            s.lerp_(p.detach(), 1 - self.decay)

    def swap_in(self, model):
        self.backup = [torch.clone(p.data) for p in model.parameters()]
        for s, p in zip(self.shadow, model.parameters()):
            p.data.copy_(s)

    def swap_out(self, model):
        for b, p in zip(self.backup, model.parameters()):
            p.data.copy_(b)
        self.backup = []


def step(model, ema, x, y, probe=None):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    if probe is not None:
        ema.swap_in(model)
        with torch.no_grad():
            acc = (model(probe[0]).argmax(-1) == probe[1]).float().mean()
        ema.swap_out(model)
        print("ema acc", acc.item())
    model.zero_grad()
    loss.backward()
    return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 5))
    ema = WeightEMA(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    probe = (torch.randn(16, 12), torch.randint(0, 5, (16,)))
    for it in range(4):
        x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
        step(model, ema, x, y, probe if it % 2 else None)
        opt.step()
        ema.update(model)
    x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
    ref = copy.deepcopy(model)
    F.cross_entropy(ref(x), y).backward()
    step(model, ema, x, y, probe)
    for p, r in zip(model.parameters(), ref.parameters()):
        assert torch.allclose(p.grad, r.grad, atol=1e-6)
    print("ok")
