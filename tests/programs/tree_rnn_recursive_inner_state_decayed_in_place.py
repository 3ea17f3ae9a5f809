"""Recursive (TreeRNN-style) sentence encoder over small binary parse trees, trained to predict a
sentiment label from the root representation."""
from dataclasses import dataclass, field
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Node:
    word: Optional[int] = None
    children: List["Node"] = field(default_factory=list)


def leaf(w):
    return Node(word=w)


def random_tree(depth, vocab_size, gen):
    if depth == 0 or torch.rand(1, generator=gen).item() < 0.2:
        return leaf(int(torch.randint(0, vocab_size, (1,), generator=gen)))
    return Node(children=[random_tree(depth - 1, vocab_size, gen), random_tree(depth - 1, vocab_size, gen)])


class TreeEncoder(nn.Module):
    def __init__(self, vocab_size, dim, num_classes=2, depth_decay=0.9):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.compose = nn.Linear(2 * dim, dim)
        self.classifier = nn.Linear(dim, num_classes)
        self.depth_decay = depth_decay

    def encode(self, node, depth=0):
        if not node.children:
            return self.embed(torch.tensor([node.word]))
        child_states = [self.encode(child, depth + 1) for child in node.children]
        h = torch.tanh(self.compose(torch.cat(child_states, dim=-1)))
        if depth > 0:
            # down-weight deep constituents so the root is dominated by the top of the tree
            h.mul_(self.depth_decay)  # expect: GG001
        return h

    def forward(self, trees):
        roots = [self.encode(t) for t in trees]
        return self.classifier(torch.cat(roots, dim=0))


def count_nodes(node):
    return 1 + sum(count_nodes(c) for c in node.children)


if __name__ == "__main__":
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    vocab_size = 30
    trees = [Node(children=[random_tree(3, vocab_size, gen), random_tree(3, vocab_size, gen)]) for _ in range(6)]
    labels = torch.randint(0, 2, (len(trees),))
    print("nodes per tree:", [count_nodes(t) for t in trees])

    model = TreeEncoder(vocab_size, dim=16)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    loss = 0
    for tree, label in zip(trees, labels):
        logits = model([tree])
        loss = loss + F.cross_entropy(logits, label.view(1))
    loss = loss / len(trees)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())
