"""The same init under no_grad, and an isinstance branch for a class the model does not contain."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU()
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            with torch.no_grad():
                m.weight.normal_(0, 0.02)
        elif isinstance(m, nn.LayerNorm):
            m.weight.fill_(1.0)

    def forward(self, x):
        return self.act(self.fc(x))


Net()(torch.randn(2, 4)).sum().backward()
