"""Weight-noise regularization adds noise through p.data before the forward but removes it before the backward; Linear saved the noisy weights, so the gradients are silently computed with clean ones."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class NoisyWeights:
    def __init__(self, model, std=0.5):
        self.params = [p for name, p in model.named_parameters() if name.endswith("weight")]
        self.std, self.noise = std, []

    def add(self):
        self.noise = [torch.randn_like(p) * self.std for p in self.params]
        for p, n in zip(self.params, self.noise):
            p.data.add_(n)

    def remove(self):
        for p, n in zip(self.params, self.noise):
            p.data.sub_(n)  # expect: GG004


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 2))
reference = copy.deepcopy(model)
x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))

noisy, noisy_ref = NoisyWeights(model), NoisyWeights(reference)
torch.manual_seed(1)
noisy.add()
loss = F.cross_entropy(model(x), y)
noisy.remove()
loss.backward()

torch.manual_seed(1)
noisy_ref.add()
ref_loss = F.cross_entropy(reference(x), y)
ref_loss.backward()
noisy_ref.remove()
assert torch.allclose(loss, ref_loss), "forward values differ"
assert not torch.allclose(model[0].weight.grad, reference[0].weight.grad), "gradient unexpectedly right"
