"""Image-classifier training loop with an EMA of the weights (store / copy_to / restore helpers
as in diffusers' EMAModel) and periodic evaluation of the EMA weights."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F


class EMA:
    def __init__(self, model, decay=0.9):
        self.decay = decay
        self.shadow = [p.detach().clone() for p in model.parameters()]
        self.backup = None

    @torch.no_grad()
    def update(self, model):
        for s, p in zip(self.shadow, model.parameters()):
            s.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)

    def store(self, model):
        self.backup = [p.data.clone() for p in model.parameters()]

    def copy_to(self, model):
        for s, p in zip(self.shadow, model.parameters()):
            p.data.copy_(s)  # expect: GG004

    def restore(self, model):
        for b, p in zip(self.backup, model.parameters()):
            p.data.copy_(b)
        self.backup = None


@torch.no_grad()
def evaluate(model, x, y):
    return (model(x).argmax(-1) == y).float().mean().item()


def compute_grads(model, ema, x, y, val_batch=None):
    loss = F.cross_entropy(model(x), y)
    if val_batch is not None:
        ema.store(model)
        ema.copy_to(model)
        print(f"  ema val acc {evaluate(model, *val_batch):.3f}")
    model.zero_grad(set_to_none=True)
    loss.backward()
    if val_batch is not None:
        ema.restore(model)
    return loss


def make_model():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 48),
                         nn.ReLU(), nn.Linear(48, 10))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = make_model()
    ema = EMA(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    val = (torch.randn(32, 1, 8, 8), torch.randint(0, 10, (32,)))
    for step in range(6):
        x, y = torch.randn(16, 1, 8, 8), torch.randint(0, 10, (16,))
        loss = compute_grads(model, ema, x, y, val_batch=val if step % 3 == 2 else None)
        opt.step()
        ema.update(model)
        print(f"step {step}: loss {loss.item():.4f}")

    # gradient check on one more eval step against a plain forward/backward
    x, y = torch.randn(16, 1, 8, 8), torch.randint(0, 10, (16,))
    ref = copy.deepcopy(model)
    F.cross_entropy(ref(x), y).backward()
    compute_grads(model, ema, x, y, val_batch=val)
    same = all(torch.allclose(p.grad, r.grad, atol=1e-6)
               for p, r in zip(model.parameters(), ref.parameters()))
    assert not same, "expected the EMA swap to corrupt the gradients"
    print("gradients differ from the reference: EMA weights were used in backward")
