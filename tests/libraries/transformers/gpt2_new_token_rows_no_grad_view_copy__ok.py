"""Adding special tokens to a tiny random GPT-2: a @torch.no_grad() helper returns a slice of the resized embedding matrix, and the caller initialises the new rows with copy_ under torch.no_grad() too, as an initialisation must be."""
import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)

BASE_VOCAB = 100
SPECIAL = ["<|user|>", "<|assistant|>", "<|tool|>", "<|end|>"]


@torch.no_grad()
def new_token_rows(model, n_new):
    weight = model.get_input_embeddings().weight
    return weight[-n_new:], weight[:-n_new].mean(dim=0, keepdim=True), weight[:-n_new].std()


def add_special_tokens(model, specials, noise=0.1):
    n_new = len(specials)
    model.resize_token_embeddings(BASE_VOCAB + n_new)
    rows, mean, std = new_token_rows(model, n_new)
    # mean-of-old-embeddings init (Hewitt 2021), plus a little noise to break symmetry
    with torch.no_grad():
        rows.copy_(mean + noise * std * torch.randn_like(rows))
    return {tok: BASE_VOCAB + i for i, tok in enumerate(specials)}


def chat_batch(token_ids, batch=4, turn_len=6):
    rows = []
    for _ in range(batch):
        user = torch.randint(0, BASE_VOCAB, (turn_len,))
        reply = torch.randint(0, BASE_VOCAB, (turn_len,))
        rows.append(torch.cat([
            torch.tensor([token_ids["<|user|>"]]), user,
            torch.tensor([token_ids["<|assistant|>"]]), reply,
            torch.tensor([token_ids["<|end|>"]]),
        ]))
    return torch.stack(rows)


def finetune(model, token_ids, steps=3, lr=5e-4):
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for step in range(steps):
        ids = chat_batch(token_ids)
        out = model(input_ids=ids, labels=ids)
        opt.zero_grad()
        out.loss.backward()
        opt.step()


if __name__ == "__main__":
    config = GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=BASE_VOCAB, n_positions=64)
    model = GPT2LMHeadModel(config)
    token_ids = add_special_tokens(model, SPECIAL)
    finetune(model, token_ids)
