"""Online SFT + rollout loop for a toy LM: one teacher-forced forward gives both the training loss
and (reusing its last-position logits) the next token for the rollout, which goes through a small
hand-written logits-processor pipeline (temperature, top-k)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TemperatureWarper:
    def __init__(self, temperature):
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        scores.div_(self.temperature)  # expect: GG003
        return scores


class TopKWarper:
    def __init__(self, top_k, filter_value=-float("inf")):
        self.top_k, self.filter_value = top_k, filter_value

    def __call__(self, input_ids, scores):
        kth = torch.topk(scores, self.top_k)[0][..., -1, None]
        return scores.masked_fill(scores < kth, self.filter_value)


class LogitsProcessorList(list):
    def __call__(self, input_ids, scores):
        for proc in self:
            scores = proc(input_ids, scores)
        return scores


class ToyLM(nn.Module):
    def __init__(self, vocab=70, d=32):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(64, d)
        layer = nn.TransformerEncoderLayer(d, 2, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.body = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        T = ids.shape[1]
        h = self.wte(ids) + self.wpe(torch.arange(T))
        h = self.body(h, mask=nn.Transformer.generate_square_subsequent_mask(T), is_causal=True)
        return self.lm_head(h)


model = ToyLM()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
processors = LogitsProcessorList([TemperatureWarper(0.7), TopKWarper(top_k=8)])
ids = torch.randint(0, 70, (3, 8))

for step in range(4):
    logits = model(ids)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1))

    with torch.no_grad():
        next_token_logits = logits[:, -1, :]
    next_token_scores = processors(ids, next_token_logits)
    next_tokens = torch.multinomial(F.softmax(next_token_scores.detach(), dim=-1), 1)

    opt.zero_grad()
    loss.backward()
    opt.step()
    ids = torch.cat([ids[:, 1:], next_tokens], dim=1)  # slide the window over the rollout
    print(step, f"{loss.item():.4f}", next_tokens.view(-1).tolist())
