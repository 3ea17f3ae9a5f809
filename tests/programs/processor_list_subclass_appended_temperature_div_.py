"""Distillation step whose logits processors live in a list subclass filled with append(); the
temperature processor divides the student's log-probabilities in place."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LogitsProcessorList(list):
    def __call__(self, scores):
        for processor in self:
            scores = processor(scores)
        return scores


class Temperature:
    def __init__(self, t):
        self.t = t

    def __call__(self, scores):
        return scores.div_(self.t)  # expect: GG001


class TopKMask:
    def __init__(self, k):
        self.k = k

    def __call__(self, scores):
        kth = scores.topk(self.k, dim=-1).values[:, -1:]
        return scores.masked_fill(scores < kth, -1e4)


if __name__ == "__main__":
    torch.manual_seed(0)
    student = nn.Linear(10, 7)
    teacher = nn.Linear(10, 7)
    processors = LogitsProcessorList()
    processors.append(Temperature(2.0))
    processors.append(TopKMask(5))
    x = torch.randn(4, 10)
    log_p = F.log_softmax(student(x), dim=-1)
    log_p = processors(log_p)
    with torch.no_grad():
        q = F.softmax(teacher(x) / 2.0, dim=-1)
    loss = -(q * log_p).sum(dim=-1).mean()
    loss.backward()
    print(loss.item())
