"""Memory-saving "optimizer in backward" (register_post_accumulate_grad_hook, as in the
PyTorch tutorial) applied to a two-headed multi-task model."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self, in_dim=20, hidden=64, n_classes=5):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
        )
        self.cls_head = nn.Linear(hidden, n_classes)
        self.reg_head = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls_head(h), self.reg_head(h).squeeze(-1)


def attach_optimizer_in_backward(model, lr=1e-3):
    optimizer_dict = {p: torch.optim.AdamW([p], lr=lr, foreach=False) for p in model.parameters()}

    def optimizer_hook(p):
        optimizer_dict[p].step()  # expect: GG001
        optimizer_dict[p].zero_grad(set_to_none=True)

    handles = [p.register_post_accumulate_grad_hook(optimizer_hook) for p in model.parameters()]
    return optimizer_dict, handles


model = MultiTaskNet()
optimizer_dict, handles = attach_optimizer_in_backward(model)
task_weights = {"cls": 1.0, "reg": 0.5}

for step in range(3):
    x = torch.randn(32, 20)
    y_cls = torch.randint(0, 5, (32,))
    y_reg = torch.randn(32)

    logits, pred = model(x)
    loss_cls = task_weights["cls"] * F.cross_entropy(logits, y_cls)
    loss_reg = task_weights["reg"] * F.smooth_l1_loss(pred, y_reg)

    # backprop each task separately so we can log per-task gradient norms later
    loss_cls.backward(retain_graph=True)
    loss_reg.backward()
    print(f"step {step} cls {loss_cls.item():.3f} reg {loss_reg.item():.3f}")

for h in handles:
    h.remove()
