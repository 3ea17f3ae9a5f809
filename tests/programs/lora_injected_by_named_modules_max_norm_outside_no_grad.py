"""LoRA injected by walking `named_modules()`, splitting each target's dotted name, finding its
parent with `get_submodule` and `setattr`-ing the wrapper; after each step a max-norm constraint on
the LoRA B weights is applied in place, outside `torch.no_grad()`: they are leaves that require grad."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LoRALinear(nn.Module):
    def __init__(self, base, r=2, alpha=4):
        super().__init__()
        self.base = base
        self.scaling = alpha / r
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        scores = (self.q_proj(x) @ x.transpose(-2, -1)).softmax(-1)
        return self.out(scores @ self.v_proj(x))


def inject_lora(model, targets=("q_proj", "v_proj")):
    wrapped = [name for name, module in model.named_modules()
               if isinstance(module, nn.Linear) and name.split(".")[-1] in targets]
    for name in wrapped:
        parent_name, child = name.rsplit(".", 1)
        parent = model.get_submodule(parent_name)
        setattr(parent, child, LoRALinear(getattr(parent, child)))
    for name, p in model.named_parameters():
        p.requires_grad_("lora_" in name)
    return wrapped


torch.manual_seed(0)
model = nn.Sequential(Attention(8), nn.GELU(), Attention(8))
inject_lora(model)
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
for step in range(2):
    x, y = torch.randn(4, 5, 8), torch.randn(4, 5, 8)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    for name, module in model.named_modules():
        if isinstance(module, LoRALinear):
            w = module.lora_B.weight
            w.div_(w.norm(dim=1, keepdim=True).clamp(min=1.0))  # expect: GG002
