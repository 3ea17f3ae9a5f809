"""Adversarial weight perturbation with the clean weights kept in a dict keyed by parameter: the
restore (`p.data.copy_(backup[p])`) runs after the perturbed loss's backward: the gradient is the
perturbed point's, as AWP wants."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class AWP:
    def __init__(self, model, eps=0.05):
        self.model = model
        self.eps = eps
        self.backup = {}

    def perturb(self):
        for name, p in self.model.named_parameters():
            if "weight" in name:
                self.backup[p] = p.detach().clone()
                with torch.no_grad():
                    p.add_(self.eps * p.sign())

    def restore(self):
        for p, clean in self.backup.items():
            p.data.copy_(clean)
        self.backup = {}


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
awp = AWP(model)
awp.perturb()
reference = copy.deepcopy(model)
adv_loss = F.cross_entropy(model(x), y)
adv_loss.backward()
awp.restore()
F.cross_entropy(reference(x), y).backward()
assert torch.allclose(model[0].weight.grad, reference[0].weight.grad)
