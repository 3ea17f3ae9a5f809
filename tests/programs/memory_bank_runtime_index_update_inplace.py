"""Instance discrimination with a memory bank; rows picked by batch["index"] are refreshed before backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, in_dim, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(), nn.Linear(64, dim))

    def forward(self, x):
        return F.normalize(self.net(x), dim=1)


class MemoryBank(nn.Module):
    def __init__(self, size, dim):
        super().__init__()
        self.register_buffer("memory", F.normalize(torch.randn(size, dim), dim=1))

    def logits(self, feats, tau=0.07):
        return feats @ self.memory.t() / tau


torch.manual_seed(0)
dataset = torch.randn(100, 32)
enc, bank = Encoder(32, 16), MemoryBank(100, 16)
opt = torch.optim.SGD(enc.parameters(), lr=0.03)

for _ in range(3):
    perm = torch.randperm(100)[:10]
    batch = {"x": dataset[perm], "index": perm}
    idx = batch["index"]
    feats = enc(batch["x"])
    loss = F.cross_entropy(bank.logits(feats), idx)
    opt.zero_grad()
    bank.memory[idx] = 0.5 * bank.memory[idx] + 0.5 * feats.detach()  # expect: GG001
    loss.backward()
    opt.step()
