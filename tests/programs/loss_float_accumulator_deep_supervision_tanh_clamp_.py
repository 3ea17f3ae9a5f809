"""Deep supervision: every stage's auxiliary head is scored and the losses are summed into a float,
`loss = loss + w * ...`; a stage squashes its features with tanh and then clamps them in place, and
tanh saved its output for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Stage(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        h.clamp_(-0.95, 0.95)  # expect: GG001
        return h


class DeeplySupervised(nn.Module):
    def __init__(self, d=12, n_cls=4, depth=3):
        super().__init__()
        self.stages = nn.ModuleList([Stage(d) for _ in range(depth)])
        self.heads = nn.ModuleList([nn.Linear(d, n_cls) for _ in range(depth)])

    def forward(self, x):
        outs = []
        for stage, head in zip(self.stages, self.heads):
            x = stage(x)
            outs.append(head(x))
        return outs


model = DeeplySupervised()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(6, 12), torch.randint(0, 4, (6,))
weights = [0.25, 0.5, 1.0]
loss = 0.0
for w, logits in zip(weights, model(x)):
    loss = loss + w * F.cross_entropy(logits, y)
opt.zero_grad()
loss.backward()
opt.step()
