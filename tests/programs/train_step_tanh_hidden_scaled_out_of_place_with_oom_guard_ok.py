"""A training step guards its forward against out-of-memory errors (`except RuntimeError as err`),
then scales the hidden activations out of place, leaving tanh's saved output as it was: it trains."""
import torch
import torch.nn as nn


def train_step(model, batch):
    try:
        hidden = torch.tanh(model(batch))
    except RuntimeError as err:
        raise SystemExit(f"step failed: {err}") from err
    hidden = hidden.mul(0.5)
    return hidden.sum()


def main():
    torch.manual_seed(0)
    model = nn.Linear(4, 4)
    loss = train_step(model, torch.randn(3, 4))
    loss.backward()


if __name__ == "__main__":
    main()
