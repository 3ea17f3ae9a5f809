"""A layer of the project's package imports its activation inside `forward`, relative to its own
package (`from .activations import squashed`): tanh saves its output, which the caller changes in
place. The analysis resolves the import against the layer's file, not the script's."""
import torch
from models.layers import Head

head = Head(4)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
for step in range(2):
    x = torch.randn(3, 4)
    out = head(x)
    out *= 0.5  # expect: GG001
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
