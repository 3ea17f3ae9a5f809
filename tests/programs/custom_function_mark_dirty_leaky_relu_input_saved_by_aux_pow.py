"""Transformer-style gated MLP (leaky ReGLU) with a memory-saving in-place activation written
as a custom torch.autograd.Function (ctx.mark_dirty + ctx.save_for_backward), plus a small
auxiliary penalty on the gate pre-activations."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class InplaceLeakyReLU(torch.autograd.Function):
    """leaky_relu that overwrites its input to avoid an extra activation buffer."""

    @staticmethod
    def forward(ctx, x, slope):
        x.mul_(torch.where(x > 0, 1.0, slope))
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)  # output has the same sign as the input
        ctx.slope = slope
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * torch.where(y > 0, 1.0, ctx.slope), None


class GatedMLP(nn.Module):
    def __init__(self, dim=48, hidden=128, slope=0.05):
        super().__init__()
        self.w_gate = nn.Linear(dim, hidden, bias=False)
        self.w_up = nn.Linear(dim, hidden, bias=False)
        self.w_down = nn.Linear(hidden, dim, bias=False)
        self.slope = slope

    def forward(self, x):
        gate = self.w_gate(x)
        up = self.w_up(x)
        # keep pre-activations from drifting (cheap regulariser)
        aux = gate.pow(2).mean()
        act = InplaceLeakyReLU.apply(gate, self.slope)  # expect: GG001
        return self.w_down(act * up), aux


class Block(nn.Module):
    def __init__(self, dim=48):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = GatedMLP(dim)

    def forward(self, x):
        y, aux = self.mlp(self.norm(x))
        return x + y, aux


blocks = nn.ModuleList([Block() for _ in range(2)])
head = nn.Linear(48, 1)
params = list(blocks.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=1e-3)
aux_weight = 1e-2

x = torch.randn(4, 10, 48)
target = torch.randn(4, 1)
h, aux_total = x, 0.0
for blk in blocks:
    h, aux = blk(h)
    aux_total = aux_total + aux
pred = head(h.mean(dim=1))
loss = F.mse_loss(pred, target) + aux_weight * aux_total
opt.zero_grad()
loss.backward()
opt.step()
print("loss", loss.item())
