"""Pre-norm MLP block; layer_norm called with keyword arguments, LN gain decayed mid-step."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PreNormMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.ln_weight = nn.Parameter(torch.ones(dim))
        self.ln_bias = nn.Parameter(torch.zeros(dim))
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        h = F.layer_norm(input=x, normalized_shape=(x.shape[-1],),
                         weight=self.ln_weight, bias=self.ln_bias, eps=1e-5)
        return x + self.fc2(F.gelu(self.fc1(h)))


torch.manual_seed(0)
model = PreNormMLP(16, 32)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = [(torch.randn(8, 16), torch.randn(8, 16)) for _ in range(3)]

for x, y in data:
    opt.zero_grad()
    out = model(x)
    loss = F.mse_loss(out, y)
    with torch.no_grad():
        model.ln_weight.mul_(0.99)  # expect: GG001
    loss.backward()
    opt.step()
