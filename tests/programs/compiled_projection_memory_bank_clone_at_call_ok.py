"""A retrieval head scores frozen features with a compiled projection (`@torch.compile`, inductor) on a clone of them, so normalising the features in place for its memory bank before the backward pass leaves what `features @ weight` saved unchanged: the gradient equals eager's."""
import torch
import torch.nn.functional as F


def project_eager(features, weight):
    return (features @ weight).relu()


@torch.compile
def project(features, weight):
    return (features @ weight).relu()


torch.manual_seed(0)
features = torch.randn(32, 16) * 3.0
weight = torch.randn(16, 8, requires_grad=True)
target = torch.randn(32, 8)
memory_bank = []

reference_features = features.clone()
scores = project(features.clone(), weight)
features.div_(features.norm(dim=1, keepdim=True))
memory_bank.append(features)
loss = F.mse_loss(scores, target)
loss.backward()

reference_weight = weight.detach().clone().requires_grad_()
reference_loss = F.mse_loss(project_eager(reference_features, reference_weight), target)
reference_loss.backward()
assert torch.allclose(loss, reference_loss), "forward values differ"
assert torch.allclose(weight.grad, reference_weight.grad), "gradient differs from eager"
