"""Progressive unfreezing: the optimizer starts with the head, the backbone's parameters are
added with `add_param_group` for the second stage, and a hand-written decay over
`optimizer.param_groups` then shrinks them in place outside `torch.no_grad()`, which torch refuses."""
import torch
import torch.nn as nn

backbone = nn.Linear(8, 8)
head = nn.Linear(8, 2)
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
head.requires_grad_(False)  # the head is done: stage two trains the backbone alone
optimizer.add_param_group({"params": backbone.parameters(), "lr": 0.01})

for group in optimizer.param_groups:
    for p in group["params"]:
        p.mul_(0.999)  # expect: GG002
head(backbone(torch.randn(4, 8))).sum().backward()
