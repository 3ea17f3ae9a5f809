"""A factory builds a learnable temperature and returns its exponential (`exp` saves its output
for backward); it is called twice with the same constant. The second result is clamped in place
before the loss's backward: torch raises. Each call builds its own tensor with its own saves."""
import torch


def make_temperature(init):
    log_t = torch.full((1,), float(init), requires_grad=True)
    return log_t.exp()


def main():
    torch.manual_seed(0)
    logits = torch.randn(8, 5, requires_grad=True)
    student_t = make_temperature(0)
    teacher_t = make_temperature(0)
    teacher_t.clamp_(min=0.5)  # expect: GG001
    loss = (logits / student_t).softmax(-1).sum() + (logits / teacher_t).logsumexp(-1).sum()
    loss.backward()


if __name__ == "__main__":
    main()
