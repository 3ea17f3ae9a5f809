"""Deep ensemble of small regressors trained in a single vectorized step:
torch.func.stack_module_state + vmap(functional_call), with an input-Jacobian
smoothness penalty computed by jacrev."""
import copy

import torch
import torch.nn as nn
from torch.func import functional_call, jacrev, stack_module_state, vmap

torch.manual_seed(0)

NUM_MODELS, IN_DIM, OUT_DIM = 5, 8, 2
JAC_WEIGHT, INIT_JITTER = 1e-2, 0.05


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(IN_DIM, 32), nn.Tanh(),
                                  nn.Linear(32, 32), nn.Tanh())
        self.head = nn.Linear(32, OUT_DIM)

    def forward(self, x):
        return self.head(self.body(x))


models = [Regressor() for _ in range(NUM_MODELS)]
params, buffers = stack_module_state(models)

# a stateless "skeleton" copy on the meta device, only used for its structure
base_model = copy.deepcopy(models[0]).to("meta")


def single_forward(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


# diversify the ensemble members a bit more than the default init does
for name, p in params.items():
    if name.endswith("weight"):
        p.add_(INIT_JITTER * torch.randn_like(p))  # expect: GG002

ensemble_forward = vmap(single_forward, in_dims=(0, 0, None))
# d out / d x for every member and every sample -> (M, B, OUT, IN)
input_jacobian = vmap(vmap(jacrev(single_forward, argnums=2), in_dims=(None, None, 0)),
                      in_dims=(0, 0, None))

optimizer = torch.optim.Adam(list(params.values()), lr=1e-3)
x = torch.randn(64, IN_DIM)
true_w = torch.randn(IN_DIM, OUT_DIM)
y = torch.sin(x @ true_w)

for step in range(4):
    preds = ensemble_forward(params, buffers, x)          # (M, B, OUT)
    mse = (preds - y.unsqueeze(0)).pow(2).mean()
    jac = input_jacobian(params, buffers, x)
    loss = mse + JAC_WEIGHT * jac.pow(2).sum(dim=(-2, -1)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: mse {mse.item():.4f} spread {preds.std(0).mean().item():.4f}")
