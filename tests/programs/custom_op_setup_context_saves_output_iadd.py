"""Tabular classifier that uses a custom Swish activation registered through torch.library.custom_op,
with a hand-written backward attached via register_autograd."""
import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.library.custom_op("tabnet_ext::swish", mutates_args=())
def swish(x: torch.Tensor, beta: float) -> torch.Tensor:
    return x * torch.sigmoid(beta * x)


@swish.register_fake
def _swish_fake(x, beta):
    return torch.empty_like(x)


def _swish_setup_context(ctx, inputs, output):
    x, beta = inputs
    ctx.beta = beta
    # keep the output around so backward does not have to redo x * sigmoid(x)
    ctx.save_for_backward(x, output)


def _swish_backward(ctx, grad_out):
    x, out = ctx.saved_tensors
    sig = torch.sigmoid(ctx.beta * x)
    grad_x = grad_out * (sig + ctx.beta * out * (1.0 - sig))
    return grad_x, None


swish.register_autograd(_swish_backward, setup_context=_swish_setup_context)


class ResidualSwishBlock(nn.Module):
    def __init__(self, dim, beta=1.0, res_scale=0.5):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.beta = beta
        self.res_scale = res_scale

    def forward(self, x):
        h = swish(self.fc1(x), self.beta)
        out = swish(self.fc2(h), self.beta)
        out += self.res_scale * h  # expect: GG001
        return out


class TabularNet(nn.Module):
    def __init__(self, n_features, width=32, depth=2, n_classes=3):
        super().__init__()
        self.stem = nn.Linear(n_features, width)
        self.blocks = nn.ModuleList([ResidualSwishBlock(width) for _ in range(depth)])
        self.head = nn.Linear(width, n_classes)

    def forward(self, x):
        x = self.stem(x)
        for blk in self.blocks:
            x = blk(x)
        return self.head(x)


def main():
    torch.manual_seed(0)
    X = torch.randn(64, 10)
    y = torch.randint(0, 3, (64,))
    model = TabularNet(10)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, foreach=True)
    for epoch in range(3):
        for xb, yb in zip(X.split(16), y.split(16)):
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: loss={loss.item():.4f}")


if __name__ == "__main__":
    main()
