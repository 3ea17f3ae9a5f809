"""The Annotated Transformer's label-smoothing loss, with `x.data.clone()` shortened to `x.data`:
the smoothed target distribution is then written into the log-softmax output itself, which
log_softmax saved for backward, and .data hides the change from autograd: the gradient is silently wrong."""
import copy

import torch
import torch.nn as nn


class LabelSmoothing(nn.Module):
    def __init__(self, size, padding_idx, smoothing=0.1):
        super().__init__()
        self.criterion = nn.KLDivLoss(reduction="sum")
        self.padding_idx = padding_idx
        self.confidence = 1.0 - smoothing
        self.smoothing = smoothing
        self.size = size

    def forward(self, x, target):
        true_dist = x.data
        true_dist.fill_(self.smoothing / (self.size - 2))  # expect: GG004
        true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
        true_dist[:, self.padding_idx] = 0
        return self.criterion(x, true_dist.clone().detach())


class Generator(nn.Module):
    def __init__(self, d_model, vocab):
        super().__init__()
        self.proj = nn.Linear(d_model, vocab)

    def forward(self, h):
        return torch.log_softmax(self.proj(h), dim=-1)


torch.manual_seed(0)
generator = Generator(16, 11)
reference = copy.deepcopy(generator)
hidden, target = torch.randn(8, 16), torch.randint(1, 11, (8,))

loss = LabelSmoothing(11, padding_idx=0)(generator(hidden), target)
loss.backward()
ref_loss = LabelSmoothing(11, padding_idx=0)(reference(hidden).clone(), target)
ref_loss.backward()
assert not torch.allclose(generator.proj.weight.grad, reference.proj.weight.grad), "gradient unexpectedly right"
