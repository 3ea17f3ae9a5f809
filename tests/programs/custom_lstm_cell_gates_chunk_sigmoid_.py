"""A hand-written LSTM cell splits its gate pre-activations with chunk() and applies the
nonlinearities in place; chunk's outputs are views of one multi-output op, which autograd
refuses to let anyone change in place: the first gate line raises (the three after it would, once it is
fixed: reported as information)."""
import torch
import torch.nn as nn


class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.x2h = nn.Linear(input_size, 4 * hidden_size)
        self.h2h = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x, state):
        h, c = state
        gates = self.x2h(x) + self.h2h(h)
        i, f, g, o = gates.chunk(4, dim=1)
        i.sigmoid_()  # expect: GG003
        f.sigmoid_()
        g.tanh_()
        o.sigmoid_()
        c = f * c + i * g
        h = o * torch.tanh(c)
        return h, c


class SequenceClassifier(nn.Module):
    def __init__(self, input_size=8, hidden_size=16, n_classes=3):
        super().__init__()
        self.hidden_size = hidden_size
        self.cell = LSTMCell(input_size, hidden_size)
        self.head = nn.Linear(hidden_size, n_classes)

    def forward(self, seq):
        h = seq.new_zeros(seq.size(1), self.hidden_size)
        c = seq.new_zeros(seq.size(1), self.hidden_size)
        for x in seq:
            h, c = self.cell(x, (h, c))
        return self.head(h)


torch.manual_seed(0)
model = SequenceClassifier()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
seq, labels = torch.randn(5, 4, 8), torch.tensor([0, 2, 1, 1])
loss = nn.functional.cross_entropy(model(seq), labels)
opt.zero_grad()
loss.backward()
opt.step()
