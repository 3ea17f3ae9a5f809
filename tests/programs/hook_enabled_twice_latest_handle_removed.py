"""Debug helper that attaches an in-place output-normalising hook each time debugging is turned
on; it is turned on twice and only the latest handle is removed, so one hook stays attached."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def unit_norm_(module, inputs, output):
    output.div_(output.norm(dim=-1, keepdim=True) + 1e-6)  # expect: GG001


class Debugger:
    def __init__(self, module):
        self.module = module
        self.handle = None

    def enable(self):
        self.handle = self.module.register_forward_hook(unit_norm_)

    def disable(self):
        if self.handle is not None:
            self.handle.remove()
            self.handle = None


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 9), nn.Tanh(), nn.Linear(9, 2))
    dbg = Debugger(model[1])
    dbg.enable()
    with torch.no_grad():
        model(torch.randn(2, 5))
    dbg.enable()
    dbg.disable()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 5), torch.randint(0, 2, (6,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(loss.item())
