"""A torch.library custom op with a defaulted float argument, called with only its tensor by keyword; setup_context saves that input, which the caller then rescales in place."""
import torch
import torch.nn as nn


@torch.library.custom_op("gg54::scaled_softsign", mutates_args=())
def scaled_softsign(x: torch.Tensor, scale: float = 2.0) -> torch.Tensor:
    return scale * x / (1 + x.abs())


def setup_context(ctx, inputs, output):
    x, scale = inputs
    ctx.scale = scale
    ctx.save_for_backward(x)


def backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * ctx.scale / (1 + x.abs()) ** 2, None


scaled_softsign.register_autograd(backward, setup_context=setup_context)


if __name__ == "__main__":
    torch.manual_seed(0)
    lin = nn.Linear(5, 5)
    x = torch.randn(7, 5)
    pre = lin(x)
    act = scaled_softsign(x=pre)
    pre.mul_(0.5)  # expect: GG001
    loss = (act * pre).sum()
    loss.backward()
    print(loss.item())
