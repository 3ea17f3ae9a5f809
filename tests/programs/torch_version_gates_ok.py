"""A small gated attention block with compatibility shims for older torch releases, trained a few steps on current torch."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from packaging import version

WITH_PT20 = int(torch.__version__.split(".")[0]) >= 2
WITH_PT21 = WITH_PT20 and int(torch.__version__.split(".")[1]) >= 1
HAS_SDPA = version.parse(torch.__version__) >= version.parse("2.0")
LEGACY = torch.__version__ < "1.10"
TORCH_MINOR = tuple(int(p) for p in torch.__version__.split(".")[:2])


class GatedAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.gate = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        if HAS_SDPA:
            y = F.scaled_dot_product_attention(q, k, v)
        else:
            attn = (q @ k.transpose(-2, -1) * self.scale).softmax(-1)
            if LEGACY:
                attn.mul_(0.5)
            y = attn @ v
        gate = torch.sigmoid(self.gate(x))
        if not WITH_PT21:
            gate.mul_(0.5)
        if TORCH_MINOR < (2, 1):
            gate.clamp_(max=0.9)
        return self.out(y * gate)


torch.manual_seed(0)
model = GatedAttention(16)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4, 8, 16)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
