"""A language-model head soft-caps its logits in place: div_, then tanh_, then mul_; tanh_ saved its own result and the final mul_ changes it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SoftCappedHead(nn.Module):
    def __init__(self, dim, vocab, cap=30.0):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, vocab, bias=False)
        self.cap = cap

    def forward(self, h):
        logits = self.proj(self.norm(h))
        logits.div_(self.cap)
        logits.tanh_()
        logits.mul_(self.cap)  # expect: GG001
        return logits


class TinyLM(nn.Module):
    def __init__(self, vocab=40, dim=16, n_layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mixers = nn.ModuleList(nn.GRU(dim, dim, batch_first=True) for _ in range(n_layers))
        self.head = SoftCappedHead(dim, vocab)

    def forward(self, ids):
        h = self.embed(ids)
        for rnn in self.mixers:
            out, _ = rnn(h)
            h = h + out
        return self.head(h)


torch.manual_seed(0)
lm = TinyLM()
opt = torch.optim.AdamW(lm.parameters(), lr=1e-3)
ids = torch.randint(0, 40, (2, 10))
logits = lm(ids[:, :-1])
loss = F.cross_entropy(logits.reshape(-1, 40), ids[:, 1:].reshape(-1))
opt.zero_grad()
loss.backward()
opt.step()
