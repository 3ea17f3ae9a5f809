"""Custom squared-ReLU operator defined with torch.library.custom_op and given its backward with
the module-level torch.library.register_autograd(name, ...) form; a residual add follows."""
import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.library.custom_op("sqrelu_ext::sqrelu", mutates_args=())
def sqrelu(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) ** 2


def _setup(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x, output)


def _backward(ctx, grad):
    x, out = ctx.saved_tensors
    return grad * 2 * torch.relu(x) + 0 * out


torch.library.register_autograd("sqrelu_ext::sqrelu", _backward, setup_context=_setup)


class Block(nn.Module):
    def __init__(self, d=12):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        h = sqrelu(self.fc(x))
        h += x  # expect: GG001
        return h


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(Block(), Block(), nn.Linear(12, 1))
    x, y = torch.randn(6, 12), torch.randn(6, 1)
    loss = F.mse_loss(model(x), y)
    loss.backward()
    print(loss.item())
