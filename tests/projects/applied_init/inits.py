import torch.nn as nn


def init_weights(m):
    if isinstance(m, nn.Linear):
        m.weight.normal_(0, 0.02)
