"""The same per-layer scales in an `nn.ParameterList`, clamped after the optimizer's step under
`torch.no_grad()`, when no graph needs them."""
import torch
import torch.nn as nn


class ScaledStack(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.scales = nn.ParameterList(nn.Parameter(torch.full((dim,), 0.1)) for _ in range(depth))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = x + self.scales[i] * torch.tanh(layer(x))
        return x


model = ScaledStack(8, depth=3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(2):
    loss = model(torch.randn(2, 8)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for scale in model.scales:
            scale.clamp_(1e-3, 1.0)
