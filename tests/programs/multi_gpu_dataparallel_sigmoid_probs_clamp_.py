"""A training script wraps its model in `nn.DataParallel` when several GPUs are present, as most do;
the wrapper runs the model's forward, whose `nn.Sigmoid` saved its output, and the script clamps
those probabilities in place before the loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, in_dim=20, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.head = nn.Sigmoid()

    def forward(self, x):
        return self.head(self.body(x)).squeeze(-1)


device = "cuda" if torch.cuda.is_available() else "cpu"
model = Classifier().to(device)
if torch.cuda.device_count() > 1:
    model = nn.DataParallel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

torch.manual_seed(0)
for step in range(2):
    x = torch.randn(16, 20, device=device)
    y = (torch.rand(16, device=device) > 0.5).float()
    probs = model(x)
    probs.clamp_(1e-4, 1 - 1e-4)  # expect: GG001
    loss = F.binary_cross_entropy(probs, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
