"""Layer factories of the project: an activation block built as a Sequential, in place."""
import torch.nn as nn


def make_act():
    return nn.Sequential(nn.ReLU(inplace=True))
