"""`Normalizer.scale_(y)` calls a @staticmethod through its class: exp saved y, `*=` changes it."""
import torch


class Normalizer:
    @staticmethod
    def scale_(y, factor=0.5):
        y *= factor  # expect: GG001
        return y


w = torch.randn(5, requires_grad=True)
Normalizer.scale_(torch.exp(w)).sum().backward()
