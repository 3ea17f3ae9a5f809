"""The same through a named view: its base, which required no grad, is in the graph from then on
(`+ r`: a backward that also runs once the view is no longer written)."""
import torch

r = torch.tensor(2.0, requires_grad=True)
u = torch.rand(8)
inner = u[1:-1]
growth = r * inner
inner += growth  # expect: GG001
(u.sum() + r).backward()
