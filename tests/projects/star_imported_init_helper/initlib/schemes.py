import torch
from torch import nn

__all__ = ["SCHEMES", "init_model_", "init_model_no_grad_"]

SCHEMES = {"gpt2": {"std": 0.02, "bias": 0.0}, "small": {"std": 0.01, "bias": 0.01}}


def _init_linear(module, std, bias):
    nn.init.normal_(module.weight, std=std)
    if module.bias is not None:
        module.bias.fill_(bias)


def init_model_(model, scheme="gpt2"):
    cfg = SCHEMES[scheme]
    for _name, m in model.named_modules():
        if isinstance(m, nn.Linear):
            _init_linear(m, **cfg)
    return model


@torch.no_grad()
def init_model_no_grad_(model, scheme="gpt2"):
    return init_model_(model, scheme)
