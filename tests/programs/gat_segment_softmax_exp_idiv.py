"""A graph-attention layer does a per-node softmax over edges by hand: `alpha = e.exp()`, scatter the sums with index_add_, then `alpha /= denom[dst]`, which changes exp's saved output."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GraphAttention(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out, bias=False)
        self.att_src = nn.Parameter(torch.randn(d_out) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(d_out) * 0.1)

    def forward(self, x, edge_index):
        src, dst = edge_index
        h = self.lin(x)
        e = F.leaky_relu((h[src] * self.att_src).sum(-1) + (h[dst] * self.att_dst).sum(-1), 0.2)
        alpha = e.exp()
        denom = torch.zeros(x.shape[0]).index_add_(0, dst, alpha)
        alpha /= denom[dst] + 1e-16  # expect: GG001
        out = torch.zeros_like(h).index_add_(0, dst, alpha.unsqueeze(-1) * h[src])
        return out


class GAT(nn.Module):
    def __init__(self, d_in, hidden, n_cls):
        super().__init__()
        self.layers = nn.ModuleList([GraphAttention(d_in, hidden), GraphAttention(hidden, n_cls)])

    def forward(self, x, edge_index):
        for i, layer in enumerate(self.layers):
            x = layer(x, edge_index)
            if i < len(self.layers) - 1:
                x = F.elu(x)
        return x


torch.manual_seed(0)
n_nodes = 10
edge_index = torch.randint(0, n_nodes, (2, 30))
edge_index = torch.cat([edge_index, torch.arange(n_nodes).repeat(2, 1)], dim=1)
x, y = torch.randn(n_nodes, 8), torch.randint(0, 3, (n_nodes,))
model = GAT(8, 16, 3)
opt = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=5e-4)
loss = F.cross_entropy(model(x, edge_index), y)
opt.zero_grad()
loss.backward()
opt.step()
