"""Residual MLP tower assembled from a config: block classes register themselves in a class-level
registry, are built through a classmethod factory, and share a base forward that calls an
activation hook each subclass overrides."""
import torch
import torch.nn as nn
import torch.nn.functional as F

MODEL_CFG = {
    "dim": 24,
    "blocks": [
        {"type": "residualsilu", "expansion": 2},
        {"type": "residualsilu", "expansion": 4},
    ],
    "num_classes": 5,
}


class BaseBlock(nn.Module):
    registry = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        BaseBlock.registry[cls.__name__.lower()] = cls

    def __init__(self, dim, expansion=2):
        super().__init__()
        self.fc_in = nn.Linear(dim, dim * expansion)
        self.fc_out = nn.Linear(dim * expansion, dim)
        self.apply(self.init_weights)

    @classmethod
    def from_config(cls, dim, cfg):
        cfg = dict(cfg)
        block_cls = cls.registry[cfg.pop("type")]
        return block_cls(dim, **cfg)

    @staticmethod
    def init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)

    def activation(self, h):
        raise NotImplementedError

    def forward(self, x):
        # post-activation block: act(W2 gelu(W1 x))
        return self.activation(self.fc_out(F.gelu(self.fc_in(x))))


class SiLUBlock(BaseBlock):
    def activation(self, h):
        return F.silu(h)


class TanhBlock(BaseBlock):
    def activation(self, h):
        return torch.tanh(h)


class ResidualMixin:
    def forward(self, x):
        out = super().forward(x)
        out += x
        return out


class ResidualSiLU(ResidualMixin, SiLUBlock):
    pass


class ResidualTanh(ResidualMixin, TanhBlock):
    pass


class Tower(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.blocks = nn.ModuleList(BaseBlock.from_config(cfg["dim"], b) for b in cfg["blocks"])
        self.norm = nn.LayerNorm(cfg["dim"])
        self.classifier = nn.Linear(cfg["dim"], cfg["num_classes"])

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.classifier(self.norm(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Tower(MODEL_CFG)
    print([type(b).__name__ for b in model.blocks])
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(32, MODEL_CFG["dim"])
    y = torch.randint(0, MODEL_CFG["num_classes"], (32,))
    for epoch in range(3):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(epoch, loss.item())
