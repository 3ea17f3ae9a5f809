"""An encoder picks its activation from a registry of classes by name (`ACTIVATIONS[name]()`, the
way config-driven code does), then shifts the activated features in place: tanh saved its output
for backward."""
import torch
import torch.nn as nn

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU, "gelu": nn.GELU}


def build_activation(name):
    return ACTIVATIONS[name]()


class Encoder(nn.Module):
    def __init__(self, in_dim=6, hidden=16, activation="tanh"):
        super().__init__()
        self.fc = nn.Linear(in_dim, hidden)
        self.act = build_activation(activation)

    def forward(self, x):
        return self.act(self.fc(x))


def fit(encoder, head, data, targets, steps=3):
    optimizer = torch.optim.Adam([*encoder.parameters(), *head.parameters()], lr=1e-2)
    for _ in range(steps):
        optimizer.zero_grad()
        features = encoder(data)
        features += 0.5  # expect: GG001
        loss = nn.functional.cross_entropy(head(features), targets)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    fit(Encoder(), nn.Linear(16, 3), torch.randn(8, 6), torch.randint(0, 3, (8,)))
