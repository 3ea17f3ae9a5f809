"""A dataclass holds a clone of softmax's output; clamp_ through the field changes only the clone."""
from dataclasses import dataclass

import torch


@dataclass
class Prediction:
    probs: torch.Tensor
    temperature: float = 1.0


w = torch.randn(4, 3, requires_grad=True)
pred = Prediction(torch.softmax(w, dim=-1).clone(), temperature=0.5)
pred.probs.clamp_(min=1e-3)
pred.probs.log().sum().backward()
