"""A character model trained with truncated BPTT carries the LSTM's (h, c) from one chunk to the
next without detaching it, and steps after each chunk's backward(retain_graph=True): the next
chunk's backward runs into the previous chunk's graph, whose LSTM saved the weights the step changed."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CharModel(nn.Module):
    def __init__(self, vocab, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, 16)
        self.lstm = nn.LSTM(16, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, state):
        out, state = self.lstm(self.embed(tokens), state)
        return self.head(out), state


def init_state(batch, hidden=32):
    return torch.zeros(1, batch, hidden), torch.zeros(1, batch, hidden)


def train_epoch(model, optimizer, text, chunk=8):
    state = init_state(text.size(0))
    total = 0.0
    for start in range(0, text.size(1) - chunk - 1, chunk):
        inputs = text[:, start:start + chunk]
        targets = text[:, start + 1:start + chunk + 1]
        logits, state = model(inputs, state)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()  # expect: GG001
        total += loss.item()
    return total


torch.manual_seed(0)
model = CharModel(vocab=20)
optimizer = torch.optim.Adam(list(model.lstm.parameters()) + list(model.head.parameters()) +
                             list(model.embed.parameters()), lr=1e-3)
text = torch.randint(0, 20, (4, 40))
train_epoch(model, optimizer, text)
