"""An ES-RNN-style forecaster writes exponentially smoothed levels into a preallocated tensor with a learned alpha; `(1 - alpha) * level[:, t - 1]` saved that column, and the next column write bumps the shared buffer."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmoothedForecaster(nn.Module):
    def __init__(self, horizon=3, hidden=16, window=4):
        super().__init__()
        self.alpha_logit = nn.Parameter(torch.tensor(0.0))
        self.window = window
        self.rnn = nn.GRU(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, horizon)

    def smooth(self, y):
        alpha = torch.sigmoid(self.alpha_logit)
        level = torch.empty_like(y)
        level[:, 0] = y[:, 0]
        for t in range(1, y.shape[1]):
            level[:, t] = alpha * y[:, t] + (1 - alpha) * level[:, t - 1]  # expect: GG001
        return level

    def forward(self, y):
        level = self.smooth(y)
        normalized = (y / level)[:, -self.window:, None]
        h, _ = self.rnn(normalized)
        return self.head(h[:, -1]) * level[:, -1:]


torch.manual_seed(0)
model = SmoothedForecaster()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
series = torch.rand(8, 12) * 5 + 10
history, future = series[:, :9], series[:, 9:]
loss = F.l1_loss(model(history), future)
opt.zero_grad()
loss.backward()
opt.step()
