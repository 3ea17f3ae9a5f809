"""Character-level transliteration seq2seq: bidirectional GRU encoder, GRU decoder, and a
config-selected "bridge" that turns the encoder outputs into the decoder's initial state."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TranslitConfig:
    src_vocab: int = 40
    tgt_vocab: int = 36
    emb_dim: int = 24
    hidden: int = 32
    bridge: str = "projected"
    pad_id: int = 0
    bos_id: int = 1
    lr: float = 1e-3
    label_smoothing: float = 0.05


class Encoder(nn.Module):
    def __init__(self, cfg: TranslitConfig):
        super().__init__()
        self.embed = nn.Embedding(cfg.src_vocab, cfg.emb_dim, padding_idx=cfg.pad_id)
        self.rnn = nn.GRU(cfg.emb_dim, cfg.hidden // 2, batch_first=True, bidirectional=True)

    def forward(self, src):
        out, _ = self.rnn(self.embed(src))
        return out


class Bridge(nn.Module):
    def __init__(self, cfg: TranslitConfig):
        super().__init__()
        self.hidden = cfg.hidden

    def init_state(self, enc_out, lengths):
        return enc_out.new_zeros(enc_out.shape[0], self.hidden)

    def forward(self, enc_out, lengths):
        return self.init_state(enc_out, lengths).unsqueeze(0)


class LastStateBridge(Bridge):
    def summarize(self, enc_out, lengths):
        with torch.no_grad():
            if bool((lengths == enc_out.shape[1]).all()):
                return enc_out[:, -1]  # bucketed batch, nothing padded
            idx = (lengths - 1).clamp(min=0)
        return enc_out[torch.arange(enc_out.shape[0]), idx]

    def init_state(self, enc_out, lengths):
        return self.summarize(enc_out, lengths)


class ProjectedBridge(LastStateBridge):
    def __init__(self, cfg: TranslitConfig):
        super().__init__(cfg)
        self.proj = nn.Linear(cfg.hidden, cfg.hidden)

    def init_state(self, enc_out, lengths):
        h = super().init_state(enc_out, lengths)
        return residual_tanh_(h, self.proj(h))


def residual_tanh_(h, delta):
    h.add_(delta)  # expect: GG003
    return torch.tanh(h)


BRIDGES = {"zeros": Bridge, "last": LastStateBridge, "projected": ProjectedBridge}


class TranslitModel(nn.Module):
    def __init__(self, cfg: TranslitConfig):
        super().__init__()
        self.cfg = cfg
        self.encoder = Encoder(cfg)
        self.bridge = BRIDGES[cfg.bridge](cfg)
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab, cfg.emb_dim, padding_idx=cfg.pad_id)
        self.decoder = nn.GRU(cfg.emb_dim, cfg.hidden, batch_first=True)
        self.out = nn.Linear(cfg.hidden, cfg.tgt_vocab)

    def forward(self, src, tgt_in):
        lengths = (src != self.cfg.pad_id).sum(dim=1)
        enc_out = self.encoder(src)
        h0 = self.bridge(enc_out, lengths)
        dec_out, _ = self.decoder(self.tgt_embed(tgt_in), h0)
        return self.out(dec_out)


def make_bucket(batch, length, vocab, pad_id):
    return torch.randint(pad_id + 2, vocab, (batch, length))


class Trainer:
    def __init__(self, cfg: TranslitConfig):
        self.cfg = cfg
        self.model = TranslitModel(cfg)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.lr)

    def loss_fn(self, logits, tgt):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1),
                               ignore_index=self.cfg.pad_id, label_smoothing=self.cfg.label_smoothing)

    def train_step(self, src, tgt):
        tgt_in = F.pad(tgt[:, :-1], (1, 0), value=self.cfg.bos_id)
        loss = self.loss_fn(self.model(src, tgt_in), tgt)
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = TranslitConfig()
    trainer = Trainer(cfg)
    for length in (6, 9):
        src = make_bucket(8, length, cfg.src_vocab, cfg.pad_id)
        tgt = make_bucket(8, length + 1, cfg.tgt_vocab, cfg.pad_id)
        print(length, trainer.train_step(src, tgt))
