"""timm-style transformer encoder with activation checkpointing (torch.utils.checkpoint, use_reentrant=False)
and a padding mask, trained on a toy sequence-classification task."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Attention(nn.Module):
    def __init__(self, dim, num_heads=4):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, pad_mask):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q.mul_(self.scale)  # expect: GG003
        attn = q @ k.transpose(-2, -1)
        attn.masked_fill_(pad_mask[:, None, None, :], float("-inf"))
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim, num_heads=4, mlp_ratio=2.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(),
                                 nn.Linear(int(dim * mlp_ratio), dim))

    def forward(self, x, pad_mask):
        x = x + self.attn(self.norm1(x), pad_mask)
        return x + self.mlp(self.norm2(x))


class Encoder(nn.Module):
    def __init__(self, vocab=100, dim=32, depth=3, num_classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.head = nn.Linear(dim, num_classes)
        self.grad_checkpointing = True

    def forward(self, tokens):
        pad_mask = tokens.eq(0)
        x = self.embed(tokens)
        for blk in self.blocks:
            if self.grad_checkpointing and self.training:
                x = checkpoint(blk, x, pad_mask, use_reentrant=False)
            else:
                x = blk(x, pad_mask)
        keep = (~pad_mask).unsqueeze(-1).float()
        return self.head((x * keep).sum(1) / keep.sum(1))


def main():
    torch.manual_seed(0)
    model = Encoder()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(1, 100, (16, 12))
    tokens[:, 9:] = 0  # right padding
    labels = torch.randint(0, 3, (16,))

    model.train()
    for step in range(3):
        loss = F.cross_entropy(model(tokens), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
