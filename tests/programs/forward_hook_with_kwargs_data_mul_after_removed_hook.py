"""Head-importance scaling for a small self-attention layer, implemented as a forward hook registered
with with_kwargs=True on the attention-probabilities module (the head scales arrive as a keyword argument)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AttentionProbs(nn.Module):
    def forward(self, scores, *, key_padding_mask=None, head_scale=None):
        if key_padding_mask is not None:
            scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        return torch.softmax(scores, dim=-1)


class SelfAttention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads, self.dh = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.probs = AttentionProbs()

    def forward(self, x, key_padding_mask=None, head_scale=None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, self.dh).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / self.dh ** 0.5
        p = self.probs(scores, key_padding_mask=key_padding_mask, head_scale=head_scale)
        return self.out((p @ v).transpose(1, 2).reshape(B, T, C))


def scale_heads_inplace(module, args, kwargs, output):
    head_scale = kwargs.get("head_scale")
    if head_scale is not None:
        output.data.mul_(head_scale.view(1, -1, 1, 1))  # expect: GG004


def scale_heads(module, args, kwargs, output):
    head_scale = kwargs.get("head_scale")
    if head_scale is not None:
        return output * head_scale.view(1, -1, 1, 1)


def qkv_grad(attn, hook, x, mask, head_scale, target):
    handle = attn.probs.register_forward_hook(hook, with_kwargs=True)
    attn.zero_grad()
    y = attn(x, key_padding_mask=mask, head_scale=head_scale)
    F.mse_loss(y, target).backward()
    handle.remove()
    return attn.qkv.weight.grad.clone()


torch.manual_seed(0)
attn = SelfAttention()
x = torch.randn(2, 6, 32)
target = torch.randn(2, 6, 32)
mask = torch.zeros(2, 6, dtype=torch.bool)
mask[1, -2:] = True
head_scale = torch.tensor([1.0, 0.5, 1.5, 0.25])

g_ref = qkv_grad(attn, scale_heads, x, mask, head_scale, target)
g_hook = qkv_grad(attn, scale_heads_inplace, x, mask, head_scale, target)
print("max abs diff:", (g_hook - g_ref).abs().max().item())
assert not torch.allclose(g_hook, g_ref, atol=1e-6)
