"""A projection head compiles its own forward in its constructor (`self.forward = torch.compile(self.forward)`, inductor) and projects frozen backbone features with `feats @ self.proj`, which saves them; the step standardises the features in place for the negatives' queue before the backward pass, and inductor's backward computes the projection's gradient from the standardised features without any error (eager raises)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ProjectionHead(nn.Module):
    def __init__(self, dim=32, out=8, compiled=True):
        super().__init__()
        self.proj = nn.Parameter(torch.randn(dim, out) * 0.2)
        if compiled:
            self.forward = torch.compile(self.forward)

    def forward(self, feats):
        return F.normalize(feats @ self.proj, dim=1)


torch.manual_seed(0)
head = ProjectionHead()
reference = ProjectionHead(compiled=False)
reference.load_state_dict(head.state_dict())
with torch.no_grad():
    feats = torch.randn(24, 32) * 2.0 + 0.5
reference_feats = feats.clone()
queue = []

z = head(feats)
feats.sub_(feats.mean(dim=0)).div_(feats.std(dim=0))  # expect: GG005
queue.append(feats)
loss = -(z[:12] * z[12:]).sum(dim=1).mean()
loss.backward()

reference_z = reference(reference_feats)
reference_loss = -(reference_z[:12] * reference_z[12:]).sum(dim=1).mean()
reference_loss.backward()
assert torch.allclose(loss, reference_loss), "forward values differ"
assert not torch.allclose(head.proj.grad, reference.proj.grad), "gradient unexpectedly right"
