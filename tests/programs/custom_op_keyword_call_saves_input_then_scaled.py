"""Scaled-softsign operator from torch.library.custom_op whose setup_context saves the input;
the caller passes the arguments by keyword and then rescales that input in place."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.library import custom_op


@custom_op("softsign_ext::scaled_softsign", mutates_args=())
def scaled_softsign(x: torch.Tensor, scale: float) -> torch.Tensor:
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
    head = nn.Linear(5, 1)
    x, y = torch.randn(7, 5), torch.randn(7, 1)
    pre = lin(x)
    act = scaled_softsign(x=pre, scale=2.0)
    pre.mul_(0.5)  # expect: GG001
    loss = F.mse_loss(head(act + pre), y)
    loss.backward()
    print(loss.item())
