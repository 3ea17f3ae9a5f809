"""Language-model fine-tuning of a tiny GPT-2 (random weights, tied input/output embeddings) with a
max-norm constraint on the token embeddings, similar to nn.Embedding(max_norm=...)."""

import argparse

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--embed-max-norm", type=float, default=0.1)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seq-len", type=int, default=16)
    return p.parse_args(argv)


def clip_token_embeddings_(model, max_norm):
    """Rescale rows of the token embedding whose L2 norm exceeds max_norm."""
    weight = model.get_input_embeddings().weight
    with torch.no_grad():
        norms = weight.norm(dim=1, keepdim=True)
        scale = (max_norm / norms.clamp_min(1e-7)).clamp(max=1.0)
        weight.mul_(scale)  # expect: GG001
    return (norms > max_norm).sum().item()


def train(args):
    config = GPT2Config(vocab_size=100, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=0, eos_token_id=0, pad_token_id=0, tie_word_embeddings=True)
    model = GPT2LMHeadModel(config)
    assert model.lm_head.weight is model.transformer.wte.weight
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model.train()

    for step in range(args.steps):
        input_ids = torch.randint(1, config.vocab_size, (4, args.seq_len))
        out = model(input_ids=input_ids, labels=input_ids)
        loss = out.loss
        clipped = 0
        if args.embed_max_norm > 0:
            clipped = clip_token_embeddings_(model, args.embed_max_norm)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()


if __name__ == "__main__":
    train(parse_args([]))
