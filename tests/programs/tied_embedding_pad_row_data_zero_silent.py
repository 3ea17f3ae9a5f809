"""The training loop keeps the pad embedding at zero with weight.data[PAD].zero_() between forward and backward; the tied output projection saved that weight, so the hidden-state gradients are silently wrong."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, VOCAB, DIM = 0, 25, 16


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.mix = nn.Sequential(nn.Linear(DIM, DIM), nn.Tanh())

    def forward(self, ids):
        return F.linear(self.mix(self.embed(ids)), self.embed.weight)


def keep_pad_zero(model):
    model.embed.weight.data[PAD].zero_()  # expect: GG004


def lm_loss(logits, ids):
    return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), ids[:, 1:].reshape(-1), ignore_index=PAD)


torch.manual_seed(0)
model = TiedLM()
reference = copy.deepcopy(model)
ids = torch.randint(1, VOCAB, (3, 9))
ids[:, -2:] = PAD

loss = lm_loss(model(ids), ids)
keep_pad_zero(model)
loss.backward()

ref_loss = lm_loss(reference(ids), ids)
ref_loss.backward()
assert torch.allclose(loss, ref_loss), "forward values differ"
assert not torch.allclose(model.mix[0].weight.grad, reference.mix[0].weight.grad), "gradient unexpectedly right"
