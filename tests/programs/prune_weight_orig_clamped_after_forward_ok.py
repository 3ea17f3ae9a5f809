"""Quantisation-aware-ish fine-tuning of a pruned linear probe: the dense weights are clipped to [-c, c] right after computing the loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune

CLIP = 0.25


class Probe(nn.Module):
    def __init__(self, d=40, n_cls=5):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.linear = nn.Linear(d, n_cls)
        prune.l1_unstructured(self.linear, "weight", amount=0.5)

    def forward(self, feats):
        return self.linear(self.norm(feats))


def clip_weights_(module, c=CLIP):
    with torch.no_grad():
        module.linear.weight_orig.clamp_(-c, c)


if __name__ == "__main__":
    torch.manual_seed(0)
    feats = torch.randn(64, 40)
    labels = torch.randint(0, 5, (64,))
    probe = Probe()
    opt = torch.optim.SGD(probe.parameters(), lr=0.1)
    for it in range(4):
        loss = F.cross_entropy(probe(feats), labels)
        clip_weights_(probe)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(it, round(loss.item(), 4))
