"""A regression trainer with gradient accumulation scales its RMSE loss out of place
(`loss = loss / self.accum_steps`), so the output sqrt saved keeps its values."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Regressor(nn.Module):
    def __init__(self, d_in=6, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.GELU(), nn.Dropout(0.1), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


class Trainer:
    def __init__(self, model, lr=1e-3, accum_steps=4):
        self.model = model
        self.accum_steps = accum_steps
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    def compute_loss(self, batch):
        x, y = batch
        return torch.sqrt(F.mse_loss(self.model(x), y) + 1e-8)

    def training_step(self, batch):
        loss = self.compute_loss(batch)
        loss = loss / self.accum_steps
        loss.backward()
        return loss.item()

    def fit(self, batches):
        self.model.train()
        self.optimizer.zero_grad()
        for step, batch in enumerate(batches, 1):
            self.training_step(batch)
            if step % self.accum_steps == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()


torch.manual_seed(0)
trainer = Trainer(Regressor())
trainer.fit([(torch.randn(16, 6), torch.randn(16)) for _ in range(8)])
