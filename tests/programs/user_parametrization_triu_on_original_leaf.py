"""Continuous Hopfield-style recurrent layer whose coupling matrix is kept symmetric with
torch.nn.utils.parametrize.register_parametrization, trained to denoise random patterns."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize


class Symmetric(nn.Module):
    """Builds W = triu(X) + triu(X, 1)^T so the recurrent couplings are symmetric."""

    def forward(self, X):
        upper = X.triu_()  # expect: GG002
        return upper + upper.triu(1).transpose(-1, -2)

    def right_inverse(self, W):
        return W.triu()


class HopfieldLayer(nn.Module):
    def __init__(self, n_units, n_steps=5, beta=2.0):
        super().__init__()
        self.coupling = nn.Linear(n_units, n_units, bias=False)
        self.bias = nn.Parameter(torch.zeros(n_units))
        self.n_steps = n_steps
        self.beta = beta
        parametrize.register_parametrization(self.coupling, "weight", Symmetric())

    def forward(self, state):
        for _ in range(self.n_steps):
            state = torch.tanh(self.beta * (self.coupling(state) + self.bias))
        return state

    def energy(self, state):
        W = self.coupling.weight
        return -0.5 * torch.einsum("bi,ij,bj->b", state, W, state) - state @ self.bias


def corrupt(patterns, flip_prob=0.15):
    flips = torch.rand_like(patterns) < flip_prob
    return torch.where(flips, -patterns, patterns)


if __name__ == "__main__":
    torch.manual_seed(0)
    n_units, n_patterns = 24, 6
    patterns = torch.randint(0, 2, (n_patterns, n_units)).float() * 2 - 1
    layer = HopfieldLayer(n_units)
    opt = torch.optim.Adam(layer.parameters(), lr=5e-3)

    for step in range(4):
        noisy = corrupt(patterns)
        recalled = layer(noisy)
        loss = F.mse_loss(recalled, patterns) + 1e-3 * layer.energy(patterns).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: loss={loss.item():.4f}")

    W = layer.coupling.weight
    print("symmetric:", torch.allclose(W, W.T))
