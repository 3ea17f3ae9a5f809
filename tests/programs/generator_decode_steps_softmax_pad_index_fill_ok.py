"""A teacher-forced decoder's steps come from a generator, `for probs, target in decode_steps(...)`, each yielding the softmax over the vocabulary; the loop masks the padding column out of place with `index_fill`, leaving the output softmax saved as it was."""
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD = 0


class Decoder(nn.Module):
    def __init__(self, vocab=12, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, vocab)


def decode_steps(decoder, tokens, h):
    for t in range(tokens.size(1) - 1):
        h = decoder.cell(decoder.embed(tokens[:, t]), h)
        yield torch.softmax(decoder.out(h), dim=-1), tokens[:, t + 1]


def sequence_loss(decoder, tokens, h0):
    losses = []
    for probs, target in decode_steps(decoder, tokens, h0):
        probs = probs.index_fill(1, torch.tensor([PAD]), 0.0)
        losses.append(F.nll_loss(torch.log(probs + 1e-9), target))
    return torch.stack(losses).mean()


torch.manual_seed(0)
decoder = Decoder()
opt = torch.optim.Adam(decoder.parameters(), lr=1e-3)
for epoch in range(2):
    tokens = torch.randint(1, 12, (4, 6))
    loss = sequence_loss(decoder, tokens, torch.zeros(4, 16))
    opt.zero_grad()
    loss.backward()
    opt.step()
