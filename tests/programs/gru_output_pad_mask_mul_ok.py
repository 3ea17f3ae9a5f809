"""The same tagger built on a GRU: GRU on CPU does not save its output, so out.mul_(mask) on it is safe."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self, vocab, n_tags, dim=16, hidden=12, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.embed = nn.Embedding(vocab, dim, padding_idx=pad_id)
        self.rnn = nn.GRU(dim, hidden, batch_first=True)
        self.emit = nn.Linear(hidden, n_tags)

    def forward(self, tokens):
        mask = (tokens != self.pad_id).unsqueeze(-1).float()
        out, _ = self.rnn(self.embed(tokens))
        out.mul_(mask)
        return self.emit(out)


def make_batch(batch=4, length=7, vocab=30, n_tags=5):
    lengths = torch.randint(3, length + 1, (batch,))
    tokens = torch.randint(1, vocab, (batch, length))
    tokens[torch.arange(length)[None, :] >= lengths[:, None]] = 0
    tags = torch.randint(0, n_tags, (batch, length))
    return tokens, tags


torch.manual_seed(0)
model = Tagger(vocab=30, n_tags=5)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    tokens, tags = make_batch()
    logits = model(tokens)
    loss = F.cross_entropy(logits.reshape(-1, 5), tags.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
