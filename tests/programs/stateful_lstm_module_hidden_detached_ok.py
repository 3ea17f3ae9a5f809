"""A stateful LSTM keeps its (h, c) on the module between batches and detaches it before each batch,
so each backward stops at the batch boundary and never needs weights that opt.step() changed."""
import torch
import torch.nn as nn


class StatefulLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8, batch_first=True)
        self.fc = nn.Linear(8, 1)
        self.hidden = None

    def forward(self, x):
        if self.hidden is not None:
            self.hidden = tuple(s.detach() for s in self.hidden)
        out, self.hidden = self.lstm(x, self.hidden)
        return self.fc(out[:, -1])


model = StatefulLSTM()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for batch in range(3):
    x = torch.randn(2, 5, 4)
    y = torch.randn(2, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
