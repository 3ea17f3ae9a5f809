"""An MLP picks its activation from a config table of lambdas and rescales the activation's output
in place; the chosen lambda's tanh saved that output for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ACTIVATIONS = {
    "tanh": lambda x: torch.tanh(x),
    "relu": lambda x: F.relu(x),
    "swish": lambda x: x * torch.sigmoid(x),
}


class ConfigMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Linear(a, b) for a, b in zip(config["sizes"][:-1], config["sizes"][1:]))
        self.act = ACTIVATIONS[config["activation"]]
        self.scale = config["scale"]

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = self.act(layer(x))
            x *= self.scale  # expect: GG001
        return self.layers[-1](x)


torch.manual_seed(0)
model = ConfigMLP({"sizes": [6, 16, 16, 1], "activation": "tanh", "scale": 1.7159})
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(32, 6), torch.randn(32, 1)
loss = F.mse_loss(model(x), y)
opt.zero_grad()
loss.backward()
opt.step()
