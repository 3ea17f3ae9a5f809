"""The renderer builds the exclusive transmittance with torch.cat and then fixes its first column in place: the written tensor is cat's fresh output, not cumprod's saved result."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RadianceField(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, hidden), nn.Softplus(), nn.Linear(hidden, hidden), nn.Softplus())
        self.sigma = nn.Linear(hidden, 1)
        self.rgb = nn.Linear(hidden, 3)

    def forward(self, pts):
        h = self.net(pts)
        return F.softplus(self.sigma(h)).squeeze(-1), torch.sigmoid(self.rgb(h))


def render(field, origins, dirs, near=0.5, far=3.0, n_samples=16):
    t = torch.linspace(near, far, n_samples).expand(origins.shape[0], n_samples)
    pts = origins[:, None, :] + dirs[:, None, :] * t[..., None]
    sigma, rgb = field(pts)
    delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e10)], dim=-1)
    alpha = 1.0 - torch.exp(-sigma * delta)
    trans = torch.cumprod(1.0 - alpha + 1e-10, dim=-1)
    trans = torch.cat([trans[..., :1], trans[..., :-1]], dim=-1)
    trans[..., 0] = 1.0
    weights = alpha * trans
    return (weights[..., None] * rgb).sum(dim=1)


torch.manual_seed(0)
field = RadianceField()
opt = torch.optim.Adam(field.parameters(), lr=5e-4)
for it in range(2):
    origins = torch.zeros(8, 3)
    dirs = F.normalize(torch.randn(8, 3), dim=-1)
    target = torch.rand(8, 3)
    loss = F.mse_loss(render(field, origins, dirs), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
