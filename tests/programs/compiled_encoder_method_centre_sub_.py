"""A contrastive encoder compiles its embedding method with `@torch.compile` (inductor); the training step centres the batch in place after embedding it and before the backward pass, and since `x @ self.weight` saved the batch, inductor's backward computes the weight's gradient from the centred batch without any error (eager raises)."""
import torch
import torch.nn as nn


class ContrastiveEncoder(nn.Module):
    def __init__(self, d_in=16, d_out=8):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_in, d_out) * 0.3)

    @torch.compile
    def embed(self, x):
        return torch.tanh(x @ self.weight)

    def forward(self, x):
        return self.embed(x)


class EagerEncoder(ContrastiveEncoder):
    def embed(self, x):
        return torch.tanh(x @ self.weight)


def alignment(z):
    return (z[0::2] - z[1::2]).pow(2).sum(dim=1).mean()


torch.manual_seed(0)
model = ContrastiveEncoder()
reference = EagerEncoder()
reference.load_state_dict(model.state_dict())
batch = torch.randn(24, 16) + 1.5
reference_batch = batch.clone()

z = model(batch)
batch.sub_(batch.mean(dim=0))  # expect: GG005
loss = alignment(z)
loss.backward()

reference_loss = alignment(reference(reference_batch))
reference_loss.backward()
assert torch.allclose(loss, reference_loss), "forward values differ"
assert not torch.allclose(model.weight.grad, reference.weight.grad), "gradient unexpectedly right"
