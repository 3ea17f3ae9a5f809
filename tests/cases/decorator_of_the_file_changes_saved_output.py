import torch

x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
HANDLERS = []


def handler(fn):
    y.mul_(2)  # expect: GG001
    HANDLERS.append(fn)
    return fn


@handler
def on_step():
    return 1


y.sum().backward()
