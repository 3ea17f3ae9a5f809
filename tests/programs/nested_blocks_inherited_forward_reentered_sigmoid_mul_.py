"""Template-method base class: Base.forward calls self.body(); an outer block's body calls an inner block (another Base subclass), whose body changes a saved tensor in place."""
import torch
import torch.nn as nn


class Base(nn.Module):
    def forward(self, x):
        return self.body(self.pre(x))

    def pre(self, x):
        return x


class Inner(Base):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def body(self, x):
        h = torch.sigmoid(self.lin(x))
        h.mul_(2)  # expect: GG001
        return h


class Outer(Base):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.proj = nn.Linear(8, 8)

    def body(self, x):
        return self.proj(self.inner(x))


model = Outer()
out = model(torch.randn(2, 8))
out.sum().backward()
print("ok")
