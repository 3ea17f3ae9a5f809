"""L2 regularisation terms summed onto the task loss with `sum(terms, start)`; the classifier clamps
its softmax probabilities in place, and softmax saved its output for backward."""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, d=6, k=3):
        super().__init__()
        self.fc1 = nn.Linear(d, 16)
        self.fc2 = nn.Linear(16, k)

    def forward(self, x):
        probs = torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)
        probs.clamp_(min=1e-6)  # expect: GG001
        return probs


model = Classifier()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
probs = model(x)
task = -probs.gather(1, y[:, None]).log().mean()
l2 = [1e-4 * (p ** 2).sum() for name, p in model.named_parameters() if "weight" in name]
loss = sum(l2, task)
opt.zero_grad()
loss.backward()
opt.step()
