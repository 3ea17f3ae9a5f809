"""A small classifier trained the way PyTorch expects: gradguard finds nothing here.

In-place ops are fine where autograd does not need the old values: initialisation under
`torch.no_grad()` (or through `nn.init`), `ReLU(inplace=True)` right after a batch norm (which
saves its input, not its output), a residual added out of place, and `optimizer.step()` after
the backward pass that used the weights.
"""

import torch
from torch import nn


class ResidualMLP(nn.Module):
    def __init__(self, dim: int, classes: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.norm = nn.BatchNorm1d(dim)
        self.relu = nn.ReLU(inplace=True)
        self.fc2 = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, classes)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.kaiming_normal_(self.fc1.weight, nonlinearity="relu")
        with torch.no_grad():
            self.fc2.weight.mul_(0.1)
            self.fc2.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.norm(self.fc1(x)))
        out = self.fc2(out)
        out = out + x
        return self.head(out)


torch.manual_seed(0)
model = ResidualMLP(dim=32, classes=4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
criterion = nn.CrossEntropyLoss()
inputs = torch.randn(128, 32)
labels = torch.randint(0, 4, (128,))

for epoch in range(5):
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.clamp_(-1.0, 1.0)

print(f"loss after {epoch + 1} epochs: {loss.item():.3f}")
