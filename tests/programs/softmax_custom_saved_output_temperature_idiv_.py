"""An attention scorer uses a hand-written softmax as a custom autograd Function (the pattern of the
PyTorch "Extending" tutorial); its backward needs its output, which it keeps with
`ctx.save_for_backward`. The caller then sharpens the weights in place with `/=`, changing what the
Function saved, so backward raises."""
import torch
import torch.nn as nn


class StableSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores):
        shifted = scores - scores.max(dim=-1, keepdim=True).values
        weights = shifted.exp()
        weights = weights / weights.sum(dim=-1, keepdim=True)
        ctx.save_for_backward(weights)
        return weights

    @staticmethod
    def backward(ctx, grad_output):
        (weights,) = ctx.saved_tensors
        inner = (grad_output * weights).sum(dim=-1, keepdim=True)
        return weights * (grad_output - inner)


class AttentionPool(nn.Module):
    def __init__(self, dim, temperature=2.0):
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.softmax = StableSoftmax.apply
        self.temperature = temperature

    def forward(self, tokens):
        weights = self.softmax(self.score(tokens).squeeze(-1))
        weights /= weights.sum(dim=-1, keepdim=True) * self.temperature  # expect: GG001
        return (weights.unsqueeze(-1) * tokens).sum(dim=1)


torch.manual_seed(0)
pool = AttentionPool(16)
optimizer = torch.optim.SGD(pool.parameters(), lr=0.05)
tokens = torch.randn(2, 5, 16)
loss = pool(tokens).pow(2).sum()
optimizer.zero_grad()
loss.backward()
optimizer.step()
