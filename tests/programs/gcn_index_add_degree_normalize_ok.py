"""A GCN layer sums messages with index_add_ into a zeros buffer and divides by the degree in place; index_add_ saves only the index, so neither write touches a saved tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MeanAggConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin_self = nn.Linear(d_in, d_out)
        self.lin_neigh = nn.Linear(d_in, d_out, bias=False)

    @staticmethod
    def degree(dst, n_nodes):
        return torch.zeros(n_nodes).index_add_(0, dst, torch.ones(dst.shape[0])).clamp_(min=1.0)

    def forward(self, x, edge_index):
        src, dst = edge_index
        agg = torch.zeros_like(x)
        agg.index_add_(0, dst, x[src])
        agg /= self.degree(dst, x.shape[0]).unsqueeze(-1)
        return self.lin_self(x) + self.lin_neigh(agg)


class GraphSAGE(nn.Module):
    def __init__(self, dims=(8, 16, 16, 3)):
        super().__init__()
        self.convs = nn.ModuleList(MeanAggConv(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.act = lambda t: F.leaky_relu(t, 0.1, inplace=True)

    def forward(self, x, edge_index):
        for conv in self.convs[:-1]:
            x = self.act(conv(x, edge_index))
        return self.convs[-1](x, edge_index)


torch.manual_seed(0)
n_nodes = 10
edge_index = torch.randint(0, n_nodes, (2, 30))
x, y = torch.randn(n_nodes, 8), torch.randint(0, 3, (n_nodes,))
model = GraphSAGE()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for epoch in range(3):
    loss = F.cross_entropy(model(x, edge_index), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
