"""With an untied output layer, zeroing the pad embedding through weight.data[PAD].zero_() between forward and backward is harmless: Embedding saves only the indices."""
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, VOCAB, DIM = 0, 25, 16


class UntiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.mix = nn.Sequential(nn.Linear(DIM, DIM), nn.Tanh())
        self.out = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, ids):
        return self.out(self.mix(self.embed(ids)))


def keep_pad_zero(model):
    model.embed.weight.data[PAD].zero_()


def lm_loss(logits, ids):
    return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), ids[:, 1:].reshape(-1), ignore_index=PAD)


torch.manual_seed(0)
model = UntiedLM()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    ids = torch.randint(1, VOCAB, (3, 9))
    ids[:, -2:] = PAD
    loss = lm_loss(model(ids), ids)
    keep_pad_zero(model)
    opt.zero_grad()
    loss.backward()
    opt.step()
