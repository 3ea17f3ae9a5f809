"""Cooperative mixins stacked on a core module: C3 runs every mixin's forward in turn (a long super() chain); the training step, called from main(), changes the sigmoid output it gets back."""
import torch
import torch.nn as nn


class Core(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


class ScaleMixin(Core):
    def forward(self, x):
        return super().forward(x)


class LogMixin(Core):
    def forward(self, x):
        out = super().forward(x)
        self.last_norm = out.detach().norm()
        return out


class CheckMixin(Core):
    def forward(self, x):
        out = super().forward(x)
        assert out.shape[-1] == 4
        return out


class NanGuard(Core):
    def forward(self, x):
        return super().forward(torch.nan_to_num(x))


class Model(ScaleMixin, LogMixin, CheckMixin, NanGuard):
    def forward(self, x):
        return super().forward(x)


def train_step(model, x):
    y = model(x)
    y.mul_(2)  # expect: GG001 (the sigmoid output Core returned)
    return y.sum()


def main():
    model = Model()
    for _ in range(2):
        loss = train_step(model, torch.randn(2, 4))
        loss.backward()
    print("ok")


if __name__ == "__main__":
    main()
