"""Test-time adaptation computes an entropy loss with BatchNorm in eval mode and then copies the target batch statistics into the running buffers (getattr over the buffer names) before backward; eval-mode BatchNorm saved those buffers."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, n_cls=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.fc = nn.Linear(8, n_cls)

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))


def collect_bn_inputs(model):
    inputs = {}
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm2d):
            m.register_forward_hook(lambda mod, args, out, name=name: inputs.__setitem__(name, args[0].detach()))
    return inputs


@torch.no_grad()
def adapt_bn_stats(model, bn_inputs):
    for name, m in model.named_modules():
        if name in bn_inputs:
            x = bn_inputs[name]
            stats = {"running_mean": x.mean(dim=(0, 2, 3)), "running_var": x.var(dim=(0, 2, 3))}
            for buf, value in stats.items():
                getattr(m, buf).copy_(value)  # expect: GG001


torch.manual_seed(0)
model = Net().eval()
params = [p for m in model.modules() if isinstance(m, nn.BatchNorm2d) for p in (m.weight, m.bias)]
opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9)
bn_inputs = collect_bn_inputs(model)
target_batch = torch.randn(8, 3, 8, 8) * 2 + 0.5
probs = model(target_batch).softmax(dim=1)
entropy = -(probs * probs.clamp_min(1e-8).log()).sum(dim=1).mean()
adapt_bn_stats(model, bn_inputs)
opt.zero_grad()
entropy.backward()
opt.step()
