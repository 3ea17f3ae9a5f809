"""Optimizer-in-backward on hand-made leaf weights (no nn.Module); two forwards before the backwards."""
import torch

torch.manual_seed(0)

W1 = torch.randn(10, 32, requires_grad=True)
W2 = torch.randn(32, 1, requires_grad=True)
LR = 0.01


def sgd_hook(param):
    with torch.no_grad():
        param.sub_(LR * param.grad)  # expect: GG001
    param.grad = None


for w in (W1, W2):
    w.register_post_accumulate_grad_hook(sgd_hook)


def forward(x):
    return torch.tanh(x @ W1) @ W2


x, y = torch.randn(64, 10), torch.randn(64, 1)
loss_a = ((forward(x[:32]) - y[:32]) ** 2).mean()
loss_b = ((forward(x[32:]) - y[32:]) ** 2).mean()
loss_a.backward()
loss_b.backward()
