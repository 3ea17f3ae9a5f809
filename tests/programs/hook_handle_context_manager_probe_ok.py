"""Probing a network's sigmoid activations with a forward hook used as a context manager (the
RemovableHandle's with-block), the hook sharpening outputs in place only while probing."""
import torch
import torch.nn as nn
import torch.nn.functional as F

probe = {}


def sharpen(module, inputs, output):
    output.pow_(2)
    probe["mean"] = output.mean().item()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 10)
        self.gate = nn.Sigmoid()
        self.out = nn.Linear(10, 1)

    def forward(self, x):
        return self.out(self.gate(self.fc(x)))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Net()
    x, y = torch.randn(8, 5), torch.randn(8, 1)
    with model.gate.register_forward_hook(sharpen):
        with torch.no_grad():
            model(x)
    print("probe:", probe)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(2):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())
