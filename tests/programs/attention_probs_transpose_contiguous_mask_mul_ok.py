"""Cross-attention probabilities are transposed to (B, S, T) and made contiguous for a downstream
kernel: `contiguous()` of a transposed tensor copies it, so masking that copy in place leaves the
output softmax saved as it was, and training runs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CrossAttn(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def forward(self, tgt, src, src_pad):
        scores = self.q(tgt) @ self.k(src).transpose(1, 2) * self.scale   # (B, T, S)
        probs = scores.softmax(dim=-1)
        per_src = probs.transpose(1, 2).contiguous()                     # (B, S, T), a copy
        per_src.mul_((~src_pad).unsqueeze(-1).float())
        coverage = per_src.sum(dim=-1)                                    # (B, S)
        return probs @ src, coverage


torch.manual_seed(0)
attn = CrossAttn(16)
opt = torch.optim.Adam(attn.parameters(), lr=1e-3)
tgt, src = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
src_pad = torch.zeros(2, 7, dtype=torch.bool)
src_pad[1, 5:] = True
ctx, cov = attn(tgt, src, src_pad)
loss = ctx.pow(2).mean() + (cov - 1).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
