"""An LSTM cell that copies its gate chunks with map(torch.clone, ...) and activates each in place; every gate is a separate tensor."""
import torch
import torch.nn as nn


class Cell(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ih = nn.Linear(d, 4 * h)
        self.hh = nn.Linear(h, 4 * h, bias=False)

    def forward(self, x, state):
        h0, c0 = state
        i, f, g, o = map(torch.clone, (self.ih(x) + self.hh(h0)).chunk(4, 1))
        i.sigmoid_()
        f.sigmoid_()
        g.tanh_()
        o.sigmoid_()
        c = f * c0 + i * g
        return o * torch.tanh(c), c


if __name__ == "__main__":
    torch.manual_seed(0)
    cell = Cell(4, 6)
    h, c = torch.zeros(2, 6), torch.zeros(2, 6)
    for _ in range(3):
        h, c = cell(torch.randn(2, 4), (h, c))
    loss = h.sum() + c.pow(2).sum()
    loss.backward()
    print(loss.item(), cell.ih.weight.grad.abs().sum().item())
