"""A deeply supervised classifier yields its heads' logits from a generator, the main head's bounded by tanh first, then the auxiliary head's; the loop scales in place only the auxiliary logits (`if i > 0`), a Linear output nothing saved, never the tanh output, which tanh saved."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DeeplySupervised(nn.Module):
    def __init__(self, dim=8, n_cls=4):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(dim, 32), nn.ReLU())
        self.trunk = nn.Sequential(nn.Linear(32, 32), nn.ReLU())
        self.main_head = nn.Linear(32, n_cls)
        self.aux_head = nn.Linear(32, n_cls)

    def head_logits(self, x):
        early = self.stem(x)
        yield torch.tanh(self.main_head(self.trunk(early)))
        yield self.aux_head(early)


torch.manual_seed(0)
model = DeeplySupervised()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
losses = []
for i, logits in enumerate(model.head_logits(x)):
    if i > 0:
        logits.mul_(0.4)
    losses.append(F.cross_entropy(logits / 0.2, y))
loss = torch.stack(losses).sum()
opt.zero_grad()
loss.backward()
opt.step()
