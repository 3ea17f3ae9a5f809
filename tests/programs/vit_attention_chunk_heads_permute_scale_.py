"""A ViT block's attention projects to q, k and v with one Linear, chunks them apart, splits heads with
reshape().permute(), then scales the queries in place; a view of a chunk output is restricted as the output
is, and torch names the last view: "Output 0 of Permute is a view and is being modified inplace"."""
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(b, n, self.heads, d // self.heads).permute(0, 2, 1, 3)
        k = k.reshape(b, n, self.heads, d // self.heads).permute(0, 2, 1, 3)
        v = v.reshape(b, n, self.heads, d // self.heads).permute(0, 2, 1, 3)
        q.mul_(self.scale)  # expect: GG003
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, n, d)
        return self.proj(out)


torch.manual_seed(0)
model = Attention(32, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
tokens = torch.randn(2, 10, 32)
loss = model(tokens).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
