"""scatter_ on softmax probabilities: softmax saved its output."""
import torch

logits = torch.randn(2, 5, requires_grad=True)
probs = torch.softmax(logits, dim=-1)
probs.scatter_(1, torch.tensor([[0], [1]]), 0.0)  # expect: GG001
probs.sum().backward()
