"""A training script keeps a global running scale and a helper that nudges it in place after each
batch (`update_scale(0.1)`, called with the same constant twice). The first batch's loss
multiplies by the scale, which `*` saves for the gradient of the other operand; the second call
changes it before `backward()`: torch raises. Each call of the helper must count, not only the first."""
import torch
import torch.nn as nn

SCALE = torch.ones(4)


def update_scale(momentum):
    SCALE.mul_(1 - momentum).add_(momentum)  # expect: GG001


def main():
    torch.manual_seed(0)
    model = nn.Linear(4, 4)
    update_scale(0.1)
    features = model(torch.randn(8, 4))
    loss = (features * SCALE).pow(2).mean()
    update_scale(0.1)
    loss.backward()


if __name__ == "__main__":
    main()
