"""Tiny GRU language model with the input embedding tied to the output projection (Press & Wolf weight
tying) and a max-norm constraint on embedding rows; checks the encoder gradients against a reference copy."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, SEQ, BATCH, MAX_NORM = 50, 32, 12, 4, 1.0


class TiedGRULM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.rnn = nn.GRU(DIM, DIM, batch_first=True)
        self.proj = nn.Linear(DIM, DIM)
        self.decoder = nn.Linear(DIM, VOCAB, bias=False)
        self.decoder.weight = self.embed.weight  # tie

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return self.decoder(torch.tanh(self.proj(h)))

    def renorm_embeddings(self, max_norm=MAX_NORM):
        w = self.embed.weight.data
        norms = w.norm(dim=1, keepdim=True).clamp_min(1e-6)
        w.mul_(torch.clamp(max_norm / norms, max=1.0))  # expect: GG004


def lm_loss(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))


model = TiedGRULM()
with torch.no_grad():
    model.embed.weight.mul_(3.0)  # wide init so the constraint is active
reference = copy.deepcopy(model)
assert reference.decoder.weight is reference.embed.weight

tokens = torch.randint(0, VOCAB, (BATCH, SEQ))

# reference gradients: plain forward/backward
lm_loss(reference(tokens), tokens).backward()

# training step: the max-norm constraint is applied right after the forward pass
logits = model(tokens)
model.renorm_embeddings()
loss = lm_loss(logits, tokens)
loss.backward()

ref_g = reference.proj.weight.grad
got_g = model.proj.weight.grad
print(f"loss {loss.item():.4f}  max |dgrad| {(ref_g - got_g).abs().max().item():.3e}")
assert not torch.allclose(ref_g, got_g, atol=1e-6), "projection gradient unexpectedly matches the reference"
