"""Alignment-supervised cross-attention with nn.MultiheadAttention(average_attn_weights=False): the per-head weights are clamped in place before the KL term, but they are a view of the softmax output that bmm saved."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AlignedDecoder(nn.Module):
    def __init__(self, vocab=40, d_model=32, n_heads=4):
        super().__init__()
        self.src_emb = nn.Embedding(vocab, d_model)
        self.tgt_emb = nn.Embedding(vocab, d_model)
        self.encoder = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.cross = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.proj = nn.Linear(d_model, vocab)

    def forward(self, src, tgt):
        memory = self.encoder(self.src_emb(src))
        query = self.tgt_emb(tgt)
        ctx, attn = self.cross(query, memory, memory, need_weights=True, average_attn_weights=False)
        return self.proj(ctx + query), attn


def diagonal_alignment(batch, tgt_len, src_len):
    # monotonic "gold" alignment: target position i attends to source position ~ i * src/tgt
    gold = torch.zeros(batch, tgt_len, src_len)
    cols = (torch.arange(tgt_len) * src_len // tgt_len).clamp(max=src_len - 1)
    gold[:, torch.arange(tgt_len), cols] = 1.0
    return 0.9 * gold + 0.1 / src_len


def alignment_kl(attn, gold, eps=1e-6):
    # attn: (B, H, T, S), gold: (B, T, S)
    attn.clamp_(min=eps)  # expect: GG001
    gold = gold.unsqueeze(1).expand_as(attn)
    return (gold * (gold.log() - attn.log())).sum(-1).mean()


def run(epochs=3, lam=0.5):
    model = AlignedDecoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    src = torch.randint(0, 40, (6, 10))
    tgt = torch.randint(0, 40, (6, 8))
    labels = torch.roll(tgt, -1, dims=1)
    gold = diagonal_alignment(6, 8, 10)
    for epoch in range(epochs):
        logits, attn = model(src, tgt)
        ce = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))
        loss = ce + lam * alignment_kl(attn, gold)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"epoch {epoch}: ce={ce.item():.3f} total={loss.item():.3f}")


if __name__ == "__main__":
    run()
