"""A classifier head whose weight init is picked by a string option; the trainer builds it from its
command-line defaults through a factory it looks up by name. The default "trunc" init runs under
`torch.no_grad()` through `nn.init`, and so does "normal" (`nn.init.normal_`): the run below asks for it, and
training runs."""
import argparse

import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, in_features, num_classes, init_mode="trunc", std=0.02):
        super().__init__()
        self.fc = nn.Linear(in_features, num_classes)
        if init_mode == "trunc":
            nn.init.trunc_normal_(self.fc.weight, std=std)
        else:
            nn.init.normal_(self.fc.weight, 0.0, std)
        nn.init.zeros_(self.fc.bias)

    def forward(self, features):
        return self.fc(features)


def make(kind, **kwargs):
    return globals()[kind](**kwargs)


parser = argparse.ArgumentParser()
parser.add_argument("--init-mode", default="normal")
args = parser.parse_args([])
head = make("Head", in_features=32, num_classes=10, init_mode=args.init_mode)
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
loss = nn.functional.cross_entropy(head(torch.randn(8, 32)), torch.randint(0, 10, (8,)))
loss.backward()
optimizer.step()
