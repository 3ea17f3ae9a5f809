"""Multi-step MAML for 5-way few-shot classification on synthetic Gaussian-cluster tasks, written
with an explicit list of fast weights and a purely functional forward pass."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_WAY, K_SHOT, N_QUERY, DIM = 5, 5, 10, 16
INNER_LR, INNER_STEPS, GRAD_CLIP = 0.4, 3, 5.0


def make_task():
    centers = 2.0 * torch.randn(N_WAY, DIM)
    def draw(k):
        y = torch.arange(N_WAY).repeat_interleave(k)
        return centers[y] + torch.randn(len(y), DIM), y
    return (*draw(K_SHOT), *draw(N_QUERY))


def init_weights(hidden=64):
    shapes = [(hidden, DIM), (hidden,), (hidden, hidden), (hidden,), (N_WAY, hidden), (N_WAY,)]
    weights = []
    for s in shapes:
        w = torch.empty(s)
        nn.init.kaiming_uniform_(w, a=5 ** 0.5) if w.dim() > 1 else nn.init.zeros_(w)
        weights.append(nn.Parameter(w))
    return weights


def forward(x, weights):
    w1, b1, w2, b2, w3, b3 = weights
    h = F.relu(F.linear(x, w1, b1))
    h = F.relu(F.linear(h, w2, b2))
    return F.linear(h, w3, b3)


def adapt(meta_weights, xs, ys):
    fast = list(meta_weights)
    for step in range(INNER_STEPS):
        loss = F.cross_entropy(forward(xs, fast), ys)
        grads = torch.autograd.grad(loss, fast, create_graph=True)
        for g in grads:
            g.clamp_(-GRAD_CLIP, GRAD_CLIP)
        fast = [w - INNER_LR * g for w, g in zip(fast, grads)]
    return fast


meta_weights = init_weights()
meta_opt = torch.optim.Adam(meta_weights, lr=1e-3)

for it in range(3):
    meta_opt.zero_grad()
    losses, accs = [], []
    for _ in range(4):
        xs, ys, xq, yq = make_task()
        fast = adapt(meta_weights, xs, ys)
        logits = forward(xq, fast)
        losses.append(F.cross_entropy(logits, yq))
        accs.append((logits.argmax(1) == yq).float().mean())
    meta_loss = torch.stack(losses).mean()
    meta_loss.backward()
    meta_opt.step()
    print(f"meta-iter {it}: loss {meta_loss.item():.4f} acc {torch.stack(accs).mean().item():.3f}")
