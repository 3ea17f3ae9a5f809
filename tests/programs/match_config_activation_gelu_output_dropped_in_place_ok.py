"""Configurable tabular MLP regressor: layers are built from a config dict with a comprehension, activation chosen with `match`."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULTS = {
    "in_features": 10,
    "widths": [32, 32, 16],
    "activation": "gelu",
    "dropout": 0.1,
    "norm": None,
    "lr": 3e-3,
    "epochs": 3,
}


def get_activation(name):
    match name.lower():
        case "relu":
            return nn.ReLU()
        case "gelu" | "gelu_tanh":
            return nn.GELU(approximate="tanh" if name.endswith("tanh") else "none")
        case "silu" | "swish":
            return nn.SiLU()
        case "tanh":
            return nn.Tanh()
        case other:
            raise ValueError(f"unknown activation {other!r}")


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        dims = [cfg["in_features"], *cfg["widths"]]
        self.linears = nn.ModuleList([nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])])
        self.acts = nn.ModuleList([get_activation(cfg["activation"]) for _ in cfg["widths"]])
        self.norms = nn.ModuleList([nn.LayerNorm(w) if cfg["norm"] == "ln" else nn.Identity() for w in cfg["widths"]])
        self.drop = functools.partial(F.dropout, p=cfg["dropout"])
        self.head = nn.Linear(dims[-1], 1)

    def forward(self, x):
        for lin, norm, act in zip(self.linears, self.norms, self.acts):
            x = act(norm(lin(x)))
            x = self.drop(x, training=self.training, inplace=True)
        return self.head(x).squeeze(-1)


def make_loader(n=96, d=10, bs=32):
    X = torch.randn(n, d)
    y = X[:, :3].sum(1) + 0.1 * torch.randn(n)
    for i in range(0, n, bs):
        yield X[i:i + bs], y[i:i + bs]


def train(cfg=None):
    cfg = {**DEFAULTS, **(cfg or {})}
    model = MLP(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    best = float("inf")
    for epoch in range(cfg["epochs"]):
        model.train()
        running = 0.0
        for xb, yb in make_loader(d=cfg["in_features"]):
            pred = model(xb)
            loss = F.mse_loss(pred, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            running += loss.item() * len(xb)
        if (epoch_loss := running / 96) < best:
            best = epoch_loss
        print(f"epoch {epoch} mse {epoch_loss:.4f} best {best:.4f}")
    return best


if __name__ == "__main__":
    torch.manual_seed(0)
    train()
