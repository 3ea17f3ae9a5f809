"""Feature distillation with a backbone frozen in one fluent line
(`nn.Sequential(...).eval().requires_grad_(False)`): the batch is normalised in place after the
backbone ran. The frozen backbone's first `Linear` saves nothing of its input (neither it nor its
weight requires grad), so the change is safe."""
import torch
import torch.nn as nn
import torch.nn.functional as F

backbone = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8)).eval().requires_grad_(False)
student = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)

for step in range(2):
    batch = torch.randn(4, 16) * 3.0
    targets = backbone(batch)
    batch.sub_(batch.mean(dim=0)).div_(batch.std(dim=0) + 1e-5)
    loss = F.mse_loss(student(batch), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
