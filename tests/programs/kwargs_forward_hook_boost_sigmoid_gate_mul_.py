"""A forward hook registered with `with_kwargs=True` rescales a sigmoid gate in place when the
call passes `boost=`; `nn.Sigmoid` saved that gate (its output) for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SpatialGate(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, 1, kernel_size=3, padding=1)
        self.act = nn.Sigmoid()

    def forward(self, x, boost=1.0):
        return self.act(self.conv(x))


def boost_hook(module, args, kwargs, output):
    boost = kwargs.get("boost", 1.0)
    if boost != 1.0:
        output.mul_(boost)  # expect: GG001
    return output


torch.manual_seed(0)
gate = SpatialGate(4)
gate.register_forward_hook(boost_hook, with_kwargs=True)
head = nn.Conv2d(4, 2, kernel_size=1)
x, y = torch.randn(2, 4, 8, 8), torch.randint(0, 2, (2, 8, 8))
attn = gate(x, boost=1.5)
loss = F.cross_entropy(head(x * attn), y)
loss.backward()
