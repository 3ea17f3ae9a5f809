"""A DETR-style box head (a ModuleList built from a generator, ReLU after every layer but the last) refines reference points in place: the last Linear does not save its output, so `tmp += reference` is fine."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLPPredictionHead(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        self.num_layers = num_layers
        h = [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        return x


class Refiner(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.bbox_embed = MLPPredictionHead(dim, dim, 4, 3)

    def forward(self, hidden, reference):
        tmp = self.bbox_embed(hidden)
        tmp += reference
        return tmp.sigmoid()


torch.manual_seed(0)
model = Refiner()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
hidden, reference = torch.randn(2, 5, 16), torch.randn(2, 5, 4)
boxes = model(hidden, reference)
loss = F.l1_loss(boxes, torch.rand(2, 5, 4))
opt.zero_grad()
loss.backward()
opt.step()
