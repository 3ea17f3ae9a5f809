"""BinaryConnect-style MLP: weights are binarised with sign() in the forward pass through a custom
straight-through-estimator autograd Function, while real-valued latent weights are kept in [-1, 1]."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w):
        ctx.save_for_backward(w)
        return torch.where(w >= 0, torch.ones_like(w), -torch.ones_like(w))

    @staticmethod
    def backward(ctx, grad_out):
        (w,) = ctx.saved_tensors
        # hard-tanh STE: no gradient once the latent weight has saturated
        return grad_out * (w.abs() <= 1).to(grad_out.dtype)


class BinaryLinear(nn.Linear):
    def reset_parameters(self):
        nn.init.uniform_(self.weight, -1.5, 1.5)
        nn.init.zeros_(self.bias)

    def forward(self, x):
        return F.linear(x, SignSTE.apply(self.weight), self.bias)


class BinaryMLP(nn.Module):
    def __init__(self, d_in=16, hidden=64, classes=4):
        super().__init__()
        self.fc1 = BinaryLinear(d_in, hidden)
        self.bn1 = nn.BatchNorm1d(hidden)
        self.fc2 = BinaryLinear(hidden, classes)

    def forward(self, x):
        return self.fc2(F.hardtanh(self.bn1(self.fc1(x))))


def ste_reference_grad(model, w_used, x, y):
    """Recompute d loss / d fc1.weight from the latent weights the forward pass really used."""
    w = w_used.clone().requires_grad_()
    h = F.linear(x, SignSTE.apply(w), model.fc1.bias)
    # batch statistics, without touching the running buffers of model.bn1
    h = F.batch_norm(h, None, None, model.bn1.weight, model.bn1.bias, training=True)
    out = model.fc2(F.hardtanh(h))
    return torch.autograd.grad(F.cross_entropy(out, y), w)[0]


def main():
    torch.manual_seed(0)
    model = BinaryMLP()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    binary_layers = [m for m in model.modules() if isinstance(m, BinaryLinear)]
    x = torch.randn(32, 16)
    y = torch.randint(0, 4, (32,))

    for step in range(3):
        w_used = model.fc1.weight.detach().clone()
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        for m in binary_layers:
            m.weight.data.clamp_(-1.0, 1.0)  # expect: GG004
        loss.backward()

        ref = ste_reference_grad(model, w_used, x, y)
        print(f"step {step}: loss {loss.item():.3f}  "
              f"max |grad - ref| = {(model.fc1.weight.grad - ref).abs().max():.2e}")
        if step == 0:
            assert not torch.allclose(model.fc1.weight.grad, ref), "STE gradient unexpectedly correct"
        opt.step()


if __name__ == "__main__":
    main()
