"""Word-level language model with a hand-written LSTM cell (so I can add layer tweaks later),
unrolled over time in Python; notebook export with the training loop at top level."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, EMB, HID, SEQ_LEN, BATCH = 60, 24, 32, 8, 4
corpus = torch.randint(0, VOCAB, (BATCH, 65))

class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.weight_ih = nn.Parameter(torch.randn(4 * hidden_size, input_size) / math.sqrt(input_size))
        self.weight_hh = nn.Parameter(torch.randn(4 * hidden_size, hidden_size) / math.sqrt(hidden_size))
        self.bias_ih = nn.Parameter(torch.zeros(4 * hidden_size))
        self.bias_hh = nn.Parameter(torch.zeros(4 * hidden_size))
        with torch.no_grad():
            self.bias_ih[hidden_size:2 * hidden_size].fill_(1.0)  # forget-gate bias trick

    def forward(self, input, state):
        hx, cx = state
        gates = (torch.mm(input, self.weight_ih.t()) + self.bias_ih
                 + torch.mm(hx, self.weight_hh.t()) + self.bias_hh)
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
        # activations in place, saves a few allocations per step
        ingate.sigmoid_()  # expect: GG003
        forgetgate.sigmoid_()
        cellgate.tanh_()
        outgate.sigmoid_()
        cy = (forgetgate * cx) + (ingate * cellgate)
        hy = outgate * torch.tanh(cy)
        return hy, (hy, cy)

class WordLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB)
        self.cell = LSTMCell(EMB, HID)
        self.drop = nn.Dropout(0.1)
        self.proj = nn.Linear(HID, VOCAB)

    def forward(self, tokens, state=None):
        B, T = tokens.shape
        if state is None:
            state = (tokens.new_zeros(B, HID, dtype=torch.float), tokens.new_zeros(B, HID, dtype=torch.float))
        emb = self.drop(self.embed(tokens))
        outputs = []
        for t in range(T):
            out, state = self.cell(emb[:, t], state)
            outputs.append(out)
        return self.proj(self.drop(torch.stack(outputs, 1))), state

model = WordLM()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

# %% training
model.train()
state = None
for step, start in enumerate(range(0, corpus.size(1) - 1, SEQ_LEN)):
    x = corpus[:, start:start + SEQ_LEN]
    y = corpus[:, start + 1:start + 1 + SEQ_LEN]
    if state is not None:
        state = tuple(s.detach() for s in state)
    logits, state = model(x, state)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(f"step {step} loss {loss.item():.3f} ppl {math.exp(loss.item()):.1f}")
