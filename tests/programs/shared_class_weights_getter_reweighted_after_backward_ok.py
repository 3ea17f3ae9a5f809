"""A loss helper fetches the shared class-weight table through a getter (`class_weights("ce")`, the
same constant at every call). Here the table is re-weighted in place after `backward()`, which no
longer needs it: it trains."""
import torch
import torch.nn.functional as F

WEIGHTS = {"ce": torch.ones(5)}


def class_weights(kind):
    return WEIGHTS[kind]


def main():
    torch.manual_seed(0)
    logits = torch.randn(8, 5, requires_grad=True)
    targets = torch.randint(0, 5, (8,))
    first = class_weights("ce")
    weights = class_weights("ce")
    loss = (F.log_softmax(logits, -1) * weights).gather(1, targets[:, None]).mean() * first.sum()
    loss.backward()
    weights.mul_(0.9)


if __name__ == "__main__":
    main()
