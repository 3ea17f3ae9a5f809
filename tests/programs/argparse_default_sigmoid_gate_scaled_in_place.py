"""Gated MLP for a small tabular regression task; the gate nonlinearity, temperature and optimizer
all come from argparse flags, and the script trains for a few steps on synthetic data."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def get_args():
    parser = argparse.ArgumentParser(description="gated MLP on tabular features")
    parser.add_argument("--in-dim", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--gate", type=str, default="sigmoid",
                        choices=["none", "sigmoid", "tanh", "softsign"])
    parser.add_argument("--gate-temp", type=float, default=2.0)
    parser.add_argument("--optim", type=str, default="adamw")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    return parser.parse_args([])


class GatedMLP(nn.Module):
    def __init__(self, in_dim, hidden, gate, temp):
        super().__init__()
        self.value_proj = nn.Linear(in_dim, hidden)
        self.gate_proj = nn.Linear(in_dim, hidden)
        self.head = nn.Linear(hidden, 1)
        self.gate = gate
        self.temp = temp

    def compute_gate(self, x):
        g = self.gate_proj(x)
        if self.gate == "none":
            return g
        elif self.gate == "sigmoid":
            g = torch.sigmoid(g)
        elif self.gate == "tanh":
            g = torch.tanh(g)
        else:
            g = F.softsign(g)
        # sharpen the gate so that it saturates faster
        g.mul_(self.temp)  # expect: GG001
        return g

    def forward(self, x):
        v = F.silu(self.value_proj(x))
        return self.head(v * self.compute_gate(x)).squeeze(-1)


def build_optimizer(params, name, lr):
    for candidate, cls in (("adamw", torch.optim.AdamW), ("adam", torch.optim.Adam), ("sgd", torch.optim.SGD)):
        if candidate == name:
            return cls(params, lr=lr)
    raise ValueError(f"unknown optimizer {name}")


def main():
    args = get_args()
    torch.manual_seed(0)
    model = GatedMLP(args.in_dim, args.hidden, args.gate, args.gate_temp)
    optimizer = build_optimizer(model.parameters(), args.optim, args.lr)
    X = torch.randn(args.steps * args.batch_size, args.in_dim)
    y = X[:, :3].sum(-1) + 0.1 * torch.randn(X.shape[0])

    for step, (xb, yb) in enumerate(zip(X.split(args.batch_size), y.split(args.batch_size))):
        pred = model(xb)
        loss = F.mse_loss(pred, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
