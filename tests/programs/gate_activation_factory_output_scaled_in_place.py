"""A gated head picks its activation by name through a small factory (`make_act("sigmoid")` returns
`nn.Sigmoid()`), then rescales the gated output in place: sigmoid saved that output for backward."""
import torch
import torch.nn as nn


def make_act(name):
    if name == "sigmoid":
        return nn.Sigmoid()
    if name == "tanh":
        return nn.Tanh()
    return nn.Identity()


class GatedHead(nn.Module):
    def __init__(self, dim=8, act="sigmoid"):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.gate = make_act(act)

    def forward(self, x):
        return self.gate(self.proj(x))


def train_step(model, batch, target, optimizer):
    optimizer.zero_grad()
    out = model(batch)
    out *= 2.0  # expect: GG001
    loss = nn.functional.mse_loss(out, target)
    loss.backward()
    optimizer.step()
    return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = GatedHead()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_step(model, torch.randn(4, 8), torch.randn(4, 8), optimizer)
