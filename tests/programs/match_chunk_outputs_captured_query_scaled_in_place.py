"""An attention block that unpacks its fused projection with `match` on the outputs of `chunk`, then
scales the query in place before the dot product."""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.qk = nn.Linear(dim, 2 * dim)

    def forward(self, x):
        match self.qk(x).chunk(2, dim=-1):
            case (q, k):
                q.mul_(q.shape[-1] ** -0.5)  # expect: GG003
            case _:
                raise ValueError("expected two parts")
        return (q @ k.transpose(-2, -1)).softmax(-1)


torch.manual_seed(0)
attn = Attention()
attn(torch.randn(2, 3, 8)).sum().backward()
