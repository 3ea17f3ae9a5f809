"""An MLP classifier applies F.dropout(..., training=self.training, inplace=True) to the output of
F.relu, which relu saved for its backward: in training mode the dropout mask is written into it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, n_in, n_hidden, n_classes, p=0.3):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_classes)
        self.p = p

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = F.dropout(h, p=self.p, training=self.training, inplace=True)  # expect: GG001
        return self.fc2(h)


def fit(model, batches, epochs=2):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    for _ in range(epochs):
        for x, y in batches:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()


torch.manual_seed(0)
batches = [(torch.randn(8, 10), torch.randint(0, 3, (8,))) for _ in range(3)]
fit(Classifier(10, 32, 3), batches)
