"""A loss helper fetches the shared class-weight table through a getter (`class_weights("ce")`, the
same constant at every call). The weighted loss multiplies by the table, which `*` saves for the
logits' gradient; the script then re-weights the table in place before `backward()`: torch raises.
The getter returns the table itself, every time, not a copy."""
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
    weights.mul_(0.9)  # expect: GG001
    loss.backward()


if __name__ == "__main__":
    main()
