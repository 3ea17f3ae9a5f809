"""Domain-adversarial training (DANN): the gradient reversal layer is the common custom Function whose
forward returns `x.view_as(x)`, a view of its input. The domain classifier starts with
`nn.ReLU(inplace=True)`, which changes that view in place: autograd forbids changing a view made
inside a custom Function, since its view+inplace handling would override the custom backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.alpha, None


class DANN(nn.Module):
    def __init__(self, d_in=16, d_feat=32, classes=3):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d_in, d_feat), nn.Tanh())
        self.label_head = nn.Linear(d_feat, classes)
        self.domain_head = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(d_feat, 2))  # expect: GG003

    def forward(self, x, alpha=1.0):
        f = self.features(x)
        reversed_f = GradReverse.apply(f, alpha)
        return self.label_head(f), self.domain_head(reversed_f)


torch.manual_seed(0)
model = DANN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y, domain = torch.randn(8, 16), torch.randint(0, 3, (8,)), torch.randint(0, 2, (8,))
class_logits, domain_logits = model(x, alpha=0.5)
loss = F.cross_entropy(class_logits, y) + F.cross_entropy(domain_logits, domain)
optimizer.zero_grad()
loss.backward()
optimizer.step()
