"""Dual-encoder retrieval scorer: query/document embeddings are scored with a bilinear head, turned into
positive scores, and then run through a configurable list of post-processing callables before a
listwise softmax loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

POSTPROC_CFG = [("clip", 40.0), ("shift", 0.05), ("scale", 0.5)]


def make_clipper(max_score):
    def clip(scores):
        # guard against exploding exp scores early in training
        return scores.clamp(max=max_score)
    return clip


def make_shift(delta):
    return lambda scores: scores - delta


def build_postprocessors(cfg):
    ops = []
    for kind, value in cfg:
        if kind == "clip":
            ops.append(make_clipper(value))
        elif kind == "shift":
            ops.append(make_shift(value))
        elif kind == "scale":
            ops.append(lambda scores, v=value: scores * v)
        else:
            raise KeyError(kind)
    return ops


class BilinearScorer(nn.Module):
    def __init__(self, dim, postprocessors):
        super().__init__()
        self.q_enc = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.d_enc = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.W = nn.Parameter(torch.eye(dim) + 0.01 * torch.randn(dim, dim))
        self.postprocessors = postprocessors

    def forward(self, queries, docs):
        q = F.normalize(self.q_enc(queries), dim=-1)
        d = F.normalize(self.d_enc(docs), dim=-1)
        scores = torch.exp(4.0 * (q @ self.W @ d.T))
        for fn in self.postprocessors:
            scores = fn(scores)
        return scores


def main():
    torch.manual_seed(0)
    dim, n_q = 16, 8
    model = BilinearScorer(dim, build_postprocessors(POSTPROC_CFG))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    queries = torch.randn(n_q, dim)
    docs = queries + 0.3 * torch.randn(n_q, dim)  # doc i is the positive for query i

    scores = model(queries, docs)
    probs = scores / scores.sum(dim=1, keepdim=True)
    loss = -torch.log(probs.diagonal()).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())


if __name__ == "__main__":
    main()
