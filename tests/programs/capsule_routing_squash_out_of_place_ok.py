"""A capsule layer squashes its routed vectors out of place, so the s that `s ** 2` saved keeps its
values; the routing logits' in-place `b += agreement` is harmless: softmax saved its output, not b."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DigitCaps(nn.Module):
    def __init__(self, in_caps=32, in_dim=8, out_caps=10, out_dim=16, iterations=3):
        super().__init__()
        self.W = nn.Parameter(0.01 * torch.randn(1, in_caps, out_caps, out_dim, in_dim))
        self.iterations = iterations

    @staticmethod
    def squash(s, dim=-1):
        squared_norm = (s ** 2).sum(dim=dim, keepdim=True)
        return s * (squared_norm / (1 + squared_norm) / torch.sqrt(squared_norm + 1e-8))

    def forward(self, u):
        u_hat = (self.W @ u[:, :, None, :, None]).squeeze(-1)
        b = torch.zeros(u_hat.shape[:3])
        for i in range(self.iterations):
            c = F.softmax(b, dim=2)
            v = self.squash((c.unsqueeze(-1) * u_hat).sum(dim=1, keepdim=True))
            if i < self.iterations - 1:
                b += (u_hat * v).sum(dim=-1)
        return v.squeeze(1)


def margin_loss(v, labels, m_pos=0.9, m_neg=0.1, lam=0.5):
    lengths = v.norm(dim=-1)
    onehot = F.one_hot(labels, lengths.shape[1]).float()
    return (onehot * F.relu(m_pos - lengths) ** 2 + lam * (1 - onehot) * F.relu(lengths - m_neg) ** 2).sum(1).mean()


torch.manual_seed(0)
primary = nn.Linear(20, 32 * 8)
caps = DigitCaps()
opt = torch.optim.Adam([*primary.parameters(), *caps.parameters()], lr=1e-3)
x, labels = torch.randn(4, 20), torch.randint(0, 10, (4,))
u = primary(x).view(4, 32, 8)
loss = margin_loss(caps(u), labels)
opt.zero_grad()
loss.backward()
opt.step()
