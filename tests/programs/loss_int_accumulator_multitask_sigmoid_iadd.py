"""Multi-task heads: the loss starts as the Python number 0 and each task's loss is added with
`loss += ...`; the attribute head shifts its sigmoid probabilities in place (`probs += eps`), and
sigmoid saved its output, so the summed loss's backward fails."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiTaskNet(nn.Module):
    def __init__(self, d=16, n_cls=5, n_attr=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, d), nn.ReLU())
        self.cls_head = nn.Linear(d, n_cls)
        self.attr_head = nn.Linear(d, n_attr)

    def forward(self, x):
        h = self.trunk(x)
        probs = torch.sigmoid(self.attr_head(h))
        probs += 1e-6  # expect: GG001
        return {"cls": self.cls_head(h), "attr": probs}


model = MultiTaskNet()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8)
targets = {"cls": torch.randint(0, 5, (4,)), "attr": torch.rand(4, 3)}
for step in range(2):
    outputs = model(x)
    loss = 0
    for task in ("cls", "attr"):
        if task == "cls":
            loss += F.cross_entropy(outputs[task], targets[task])
        else:
            loss += F.binary_cross_entropy(outputs[task], targets[task])
    opt.zero_grad()
    loss.backward()
    opt.step()
