"""Embedding weights shrunk through .data between forward and backward while only the padding row is saved in a clone and copied back, so the other saved rows stay changed."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD = 0


class BagModel(nn.Module):
    def __init__(self, vocab=20, d=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.proj = nn.Linear(d, d, bias=False)
        self.out = nn.Linear(d, 2)

    def forward(self, tokens):
        # the projection of the whole table: autograd saves the embedding weight for its backward
        table = self.proj(self.emb.weight)
        return self.out(torch.tanh(table[tokens]).mean(1))


def shrink_keep_pad(emb, factor=0.5):
    pad_row = emb.weight.data[PAD].clone()
    emb.weight.data.mul_(factor)  # expect: GG004
    emb.weight.data[PAD].copy_(pad_row)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = BagModel()
    tokens = torch.randint(0, 20, (4, 6))
    y = torch.randint(0, 2, (4,))
    ref = copy.deepcopy(model)
    F.cross_entropy(ref(tokens), y).backward()
    loss = F.cross_entropy(model(tokens), y)
    shrink_keep_pad(model.emb)
    loss.backward()
    wrong = not torch.allclose(model.proj.weight.grad, ref.proj.weight.grad, atol=1e-6)
    assert wrong, "the shrunk rows should have leaked into the backward pass"
    print("gradient silently wrong", loss.item())
