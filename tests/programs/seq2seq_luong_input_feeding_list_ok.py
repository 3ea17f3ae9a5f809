"""A Luong-attention seq2seq decoder with input feeding keeps each step's attentional vector in a
Python variable and collects the logits in a list, so nothing the cell saved is written over."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hidden, batch_first=True)

    def forward(self, src):
        outputs, hidden = self.rnn(self.embedding(src))
        return outputs, hidden[0]


class AttnDecoder(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.hidden = hidden
        self.embedding = nn.Embedding(vocab, emb)
        self.cell = nn.GRUCell(emb + hidden, hidden)
        self.combine = nn.Linear(2 * hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def attend(self, h, enc_out):
        scores = torch.bmm(enc_out, h.unsqueeze(2)).squeeze(2)
        weights = F.softmax(scores, dim=1)
        return torch.bmm(weights.unsqueeze(1), enc_out).squeeze(1)

    def forward(self, trg, h, enc_out):
        batch, steps = trg.shape
        attentional = enc_out.new_zeros(batch, self.hidden)
        logits = []
        for t in range(steps):
            x = torch.cat([self.embedding(trg[:, t]), attentional], dim=1)
            h = self.cell(x, h)
            context = self.attend(h, enc_out)
            attentional = torch.tanh(self.combine(torch.cat([context, h], dim=1)))
            logits.append(self.out(attentional))
        return torch.stack(logits, dim=1)


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab=20, trg_vocab=22, emb=8, hidden=16):
        super().__init__()
        self.encoder = Encoder(src_vocab, emb, hidden)
        self.decoder = AttnDecoder(trg_vocab, emb, hidden)

    def forward(self, src, trg):
        enc_out, h = self.encoder(src)
        return self.decoder(trg[:, :-1], h, enc_out)


torch.manual_seed(0)
model = Seq2Seq()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
src, trg = torch.randint(0, 20, (4, 7)), torch.randint(0, 22, (4, 6))
logits = model(src, trg)
loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), trg[:, 1:].reshape(-1))
opt.zero_grad()
loss.backward()
opt.step()
