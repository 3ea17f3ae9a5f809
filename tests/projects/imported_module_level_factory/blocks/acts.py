import torch.nn as nn


def make_act(name: str) -> nn.Module:
    if name == "relu":
        return nn.ReLU(inplace=True)
    return nn.GELU()
