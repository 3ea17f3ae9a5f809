"""Custom LSTM cell written from scratch (to later add layer-norm / peepholes),
unrolled over a short random sequence for a sequence-regression task."""
import torch
import torch.nn as nn

torch.manual_seed(0)

INPUT, HIDDEN, SEQ_LEN, BATCH = 6, 12, 5, 3

class MyLSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.x2h = nn.Linear(input_size, 4 * hidden_size)
        self.h2h = nn.Linear(hidden_size, 4 * hidden_size, bias=False)
        self.reset_parameters()

    def reset_parameters(self):
        std = 1.0 / self.hidden_size ** 0.5
        for w in self.parameters():
            nn.init.uniform_(w, -std, std)

    def forward(self, x, state):
        h, c = state
        gates = self.x2h(x) + self.h2h(h)
        # chunk() returns views that can't be modified in place, so copy them first
        i, f, g, o = [t.clone() for t in gates.chunk(4, dim=1)]
        # activations in place to save memory
        i.sigmoid_()
        f.sigmoid_()
        g.tanh_()
        o.sigmoid_()
        c_next = f * c + i * g
        h_next = o * torch.tanh(c_next)
        return h_next, c_next

class SeqRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = MyLSTMCell(INPUT, HIDDEN)
        self.readout = nn.Linear(HIDDEN, 1)

    def forward(self, seq):
        h = seq.new_zeros(seq.size(1), HIDDEN)
        c = seq.new_zeros(seq.size(1), HIDDEN)
        for t in range(seq.size(0)):
            h, c = self.cell(seq[t], (h, c))
        return self.readout(h).squeeze(-1)

model = SeqRegressor()
opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
seq = torch.randn(SEQ_LEN, BATCH, INPUT)
target = seq.sum(dim=(0, 2))

opt.zero_grad()
pred = model(seq)
loss = nn.functional.smooth_l1_loss(pred, target)
loss.backward()
opt.step()
print("loss", loss.item())
