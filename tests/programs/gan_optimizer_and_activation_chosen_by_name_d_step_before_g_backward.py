"""A GAN whose optimizer (`getattr(torch.optim, name)`, in a `try` for its `betas`) and activation
(`getattr(nn, name)`) are chosen by names read from the environment: the discriminator's step
changes its weights, which `d_fake`'s graph saved, before the generator's backward reuses it."""
import os
import functools
import torch
import torch.nn as nn

CFG = {
    "latent_dim": int(os.environ.get("LATENT_DIM", 16)),
    "hidden": int(os.environ.get("HIDDEN", 64)),
    "data_dim": 8,
    "lr_g": float(os.environ.get("LR_G", "2e-4")),
    "lr_d": float(os.environ.get("LR_D", "2e-4")),
    "epochs": int(os.environ.get("EPOCHS", 3)),
    "batch_size": int(os.environ.get("BS", 32)),
    "act": os.environ.get("ACT", "LeakyReLU"),
    "optim": os.environ.get("OPTIM", "Adam"),
}
torch.manual_seed(0)
DEVICE = "cpu"


def make_mlp(in_dim, out_dim, hidden=64, n_layers=2, act="ReLU", final=None):
    act_cls = getattr(nn, act)
    layers, d = [], in_dim
    for _ in range(n_layers):
        layers += [nn.Linear(d, hidden), act_cls()]
        d = hidden
    layers.append(nn.Linear(d, out_dim))
    if final is not None:
        layers.append(final)
    return nn.Sequential(*layers)


class Generator(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.net = make_mlp(cfg["latent_dim"], cfg["data_dim"], cfg["hidden"],
                            act=cfg["act"], final=nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.net = make_mlp(cfg["data_dim"], 1, cfg["hidden"], act=cfg["act"])

    def forward(self, x):
        return self.net(x)


def sample_real(n, dim=8, shift=0.5, scale=1.0):
    return torch.tanh(scale * torch.randn(n, dim) + shift)


def get_optimizer(params, name="Adam", lr=1e-3, betas=(0.5, 0.999)):
    opt_cls = getattr(torch.optim, name)
    try:
        return opt_cls(params, lr=lr, betas=betas)
    except TypeError:
        return opt_cls(params, lr=lr)


G = Generator(CFG).to(DEVICE)
D = Discriminator(CFG).to(DEVICE)
make_opt = functools.partial(get_optimizer, name=CFG["optim"])
opt_g = make_opt(G.parameters(), lr=CFG["lr_g"])
opt_d = make_opt(D.parameters(), lr=CFG["lr_d"])
bce = nn.BCEWithLogitsLoss()
history = {"d": [], "g": []}

for epoch in range(CFG["epochs"]):
    real = sample_real(CFG["batch_size"], CFG["data_dim"])
    z = torch.randn(CFG["batch_size"], CFG["latent_dim"])
    fake = G(z)

    # ---- train D ----
    opt_d.zero_grad()
    d_real = D(real)
    d_fake = D(fake)
    d_loss = bce(d_real, torch.ones_like(d_real)) + bce(d_fake, torch.zeros_like(d_fake))
    d_loss.backward(retain_graph=True)
    opt_d.step()  # expect: GG001

    # ---- train G (reuses d_fake to save a forward pass) ----
    opt_g.zero_grad()
    g_loss = bce(d_fake, torch.ones_like(d_fake))
    g_loss.backward()
    opt_g.step()

    history["d"].append(d_loss.item())
    history["g"].append(g_loss.item())
    print(f"epoch {epoch} d={history['d'][-1]:.4f} g={history['g'][-1]:.4f}")
