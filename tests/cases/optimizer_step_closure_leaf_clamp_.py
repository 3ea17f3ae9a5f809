"""optimizer.step(closure) calls the closure with grad enabled: clamp_ on the optimised leaf raises."""
import torch

w = torch.randn(3, requires_grad=True)
opt = torch.optim.LBFGS([w], max_iter=1)


def closure():
    w.clamp_(-1, 1)  # expect: GG002
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    return loss


opt.step(closure)
