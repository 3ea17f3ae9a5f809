"""Prototype classification compiled with `@torch.compile` (inductor) scores embeddings against a clone of the prototype matrix; updating the prototypes in place by an exponential moving average before the backward pass leaves what `embeddings @ prototypes` saved unchanged: the encoder's gradient equals eager's."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def prototype_logits_eager(embeddings, prototypes):
    return (embeddings @ prototypes) / 0.1


@torch.compile
def prototype_logits(embeddings, prototypes):
    return (embeddings @ prototypes) / 0.1


torch.manual_seed(0)
encoder = nn.Linear(12, 8)
prototypes = F.normalize(torch.randn(8, 5), dim=0)
batch = torch.randn(16, 12)
labels = torch.randint(0, 5, (16,))
reference_prototypes = prototypes.clone()

embeddings = F.normalize(encoder(batch), dim=1)
logits = prototype_logits(embeddings, prototypes.clone())
prototypes.mul_(0.5).add_(0.5 * torch.randn(8, 5))
loss = F.cross_entropy(logits, labels)
loss.backward()
compiled_grad = encoder.weight.grad.clone()

encoder.zero_grad()
reference_loss = F.cross_entropy(prototype_logits_eager(F.normalize(encoder(batch), dim=1), reference_prototypes), labels)
reference_loss.backward()
assert torch.allclose(loss, reference_loss), "forward values differ"
assert torch.allclose(compiled_grad, encoder.weight.grad), "gradient differs from eager"
