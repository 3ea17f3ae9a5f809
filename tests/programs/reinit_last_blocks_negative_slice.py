"""Fine-tuning a small MLP stack whose last blocks are re-initialised before training."""
import torch
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self, width=16, depth=4):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        for block in self.blocks:
            x = torch.relu(block(x))
        return self.head(x)


def reinit_top(model, n_top, std=0.02):
    for block in model.blocks[-n_top:]:
        block.weight.normal_(0.0, std)  # expect: GG002
        block.bias.zero_()


torch.manual_seed(0)
model = Stack()
reinit_top(model, n_top=2)
loss = model(torch.randn(8, 16)).pow(2).mean()
loss.backward()
