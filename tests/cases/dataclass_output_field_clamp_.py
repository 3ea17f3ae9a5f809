"""A dataclass holds softmax's output as a positional field; clamp_ through the field changes it."""
from dataclasses import dataclass

import torch


@dataclass
class Prediction:
    probs: torch.Tensor
    temperature: float = 1.0


w = torch.randn(4, 3, requires_grad=True)
pred = Prediction(torch.softmax(w, dim=-1))
pred.probs.clamp_(min=1e-3)  # expect: GG001
pred.probs.log().sum().backward()
