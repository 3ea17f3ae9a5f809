"""Memory-saving 'optimizer step in backward' recipe: each parameter gets its own
AdamW and a register_post_accumulate_grad_hook that steps and frees its gradient,
applied to a small autoencoder trained with a reconstruction and a latent loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AutoEncoder(nn.Module):
    def __init__(self, in_dim=64, latent=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, 32), nn.SiLU(), nn.Linear(32, latent))
        self.decoder = nn.Sequential(nn.Linear(latent, 32), nn.SiLU(), nn.Linear(32, in_dim))

    def forward(self, x):
        z = self.encoder(x)
        return z, self.decoder(z)


model = AutoEncoder()
optimizer_dict = {p: torch.optim.AdamW([p], lr=1e-3, weight_decay=0.01)
                  for p in model.parameters()}


def optimizer_hook(param):
    optimizer_dict[param].step()
    optimizer_dict[param].zero_grad(set_to_none=True)


handles = [p.register_post_accumulate_grad_hook(optimizer_hook) for p in model.parameters()]


def latent_penalty(z):
    # keep the code close to a unit Gaussian (cheap VAE-ish regulariser)
    return z.pow(2).mean() + (z.std(dim=0) - 1).pow(2).mean()


data = torch.randn(256, 64)
for epoch in range(2):
    for batch in data.split(64):
        z, recon = model(batch)
        recon_loss = F.mse_loss(recon, batch)
        reg_loss = 0.1 * latent_penalty(z)
        (recon_loss + reg_loss).backward()
    print(f"epoch {epoch}: recon {recon_loss.item():.4f} reg {reg_loss.item():.4f}")

for h in handles:
    h.remove()
