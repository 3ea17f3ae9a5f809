"""An attention scorer compiled in place with `model.compile()` (inductor) projects a clone of its queries; sharpening the queries in place before the backward pass leaves what `queries @ self.query_proj` saved unchanged: the gradient equals eager's."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AttentionScorer(nn.Module):
    def __init__(self, dim=16, heads=4):
        super().__init__()
        self.query_proj = nn.Parameter(torch.randn(dim, heads) * 0.2)

    def forward(self, queries):
        return F.log_softmax(queries @ self.query_proj, dim=-1)


torch.manual_seed(0)
model = AttentionScorer()
reference = AttentionScorer()
reference.load_state_dict(model.state_dict())
model.compile()
queries = torch.randn(20, 16)
targets = torch.randint(0, 4, (20,))
reference_queries = queries.clone()

log_probs = model(queries.clone())
queries.mul_(1.5)
loss = F.nll_loss(log_probs, targets)
loss.backward()

reference_loss = F.nll_loss(reference(reference_queries), targets)
reference_loss.backward()
assert torch.allclose(loss, reference_loss), "forward values differ"
assert torch.allclose(model.query_proj.grad, reference.query_proj.grad), "gradient differs from eager"
