"""A training script keeps a global running scale and a helper that nudges it in place
(`update_scale(0.1)`, called with the same constant twice): here the second update runs after
`backward()`, which no longer needs the saved scale: it trains."""
import torch
import torch.nn as nn

SCALE = torch.ones(4)


def update_scale(momentum):
    SCALE.mul_(1 - momentum).add_(momentum)


def main():
    torch.manual_seed(0)
    model = nn.Linear(4, 4)
    update_scale(0.1)
    features = model(torch.randn(8, 4))
    loss = (features * SCALE).pow(2).mean()
    loss.backward()
    update_scale(0.1)


if __name__ == "__main__":
    main()
