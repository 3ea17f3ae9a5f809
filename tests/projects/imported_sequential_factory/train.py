"""An activation block built by a factory in another file of the project runs `ReLU(inplace=True)`
on sigmoid's output, which sigmoid saved for backward. The change is reported at the call of the
block in this file (its construction lies in layers.py)."""
import torch
from layers import make_act

act = make_act()
y = torch.sigmoid(torch.ones(2, requires_grad=True))
act(y)  # expect: GG001
y.sum().backward()
