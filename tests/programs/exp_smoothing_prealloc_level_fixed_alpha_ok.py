"""The forecaster smooths its network's denoised series into a preallocated tensor with a fixed float alpha: multiplying by a Python number saves nothing, so the column writes are safe."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmoothedForecaster(nn.Module):
    def __init__(self, horizon=3, hidden=16, window=4, alpha=0.3):
        super().__init__()
        self.alpha, self.window = alpha, window
        self.denoise = nn.Conv1d(1, 1, 3, padding=1)
        self.rnn = nn.GRU(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, horizon)

    def smooth(self, y):
        level = torch.empty_like(y)
        level[:, 0] = y[:, 0]
        for t in range(1, y.shape[1]):
            level[:, t] = self.alpha * y[:, t] + (1 - self.alpha) * level[:, t - 1]
        return level

    def forward(self, y):
        clean = y + self.denoise(y[:, None, :]).squeeze(1)
        level = self.smooth(clean)
        h, _ = self.rnn(level[:, -self.window:, None] / 10.0)
        return self.head(h[:, -1]) + level[:, -1:]


torch.manual_seed(0)
model = SmoothedForecaster()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    series = torch.rand(8, 12) * 5 + 10
    history, future = series[:, :9], series[:, 9:]
    loss = F.l1_loss(model(history), future)
    opt.zero_grad()
    loss.backward()
    opt.step()
