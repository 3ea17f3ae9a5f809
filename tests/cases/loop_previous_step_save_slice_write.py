"""A loop writes a step's slice of a preallocated tensor after the previous step's Linear saved
its own slice: every write but the first meets that save."""
import torch
import torch.nn as nn

proj = nn.Linear(3, 3)
steps = torch.randn(4, 3)
states = torch.zeros(len(steps), 3)
outputs = []
for t in range(steps.shape[0]):
    states[t] = torch.tanh(steps[t])  # expect: GG001
    outputs.append(proj(states[t]))
torch.stack(outputs).sum().backward()
