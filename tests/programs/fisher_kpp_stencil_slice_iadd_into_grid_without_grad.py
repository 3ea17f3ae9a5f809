"""Fisher-KPP reaction-diffusion on a 1D grid with an explicit finite-difference stencil;
we fit the diffusion coefficient and growth rate so the simulated front matches an
observed population profile."""
import math
import torch
import torch.nn as nn

torch.manual_seed(0)

NX, NT = 128, 200
DX, DT = 1.0 / NX, 2e-5


class FisherKPP(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_D = nn.Parameter(torch.tensor(math.log(0.05)))
        self.log_r = nn.Parameter(torch.tensor(math.log(20.0)))

    def forward(self, u0, n_steps=NT):
        D, r = self.log_D.exp(), self.log_r.exp()
        u = u0.clone()
        for _ in range(n_steps):
            lap = (u[2:] - 2.0 * u[1:-1] + u[:-2]) / DX ** 2
            growth = r * u[1:-1] * (1.0 - u[1:-1])
            u[1:-1] += DT * (D * lap + growth)  # expect: GG001
            # zero-flux boundaries
            u[0] = u[1]
            u[-1] = u[-2]
        return u


def initial_profile():
    x = torch.linspace(0, 1, NX)
    return torch.sigmoid(-(x - 0.2) / 0.02)


def main():
    model = FisherKPP()
    u0 = initial_profile()
    with torch.no_grad():
        truth = FisherKPP()
        truth.log_D.fill_(math.log(0.08))
        observed = truth(u0) + 0.01 * torch.randn(NX)

    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    pred = model(u0)
    loss = ((pred - observed) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"loss={loss.item():.5f} D={model.log_D.exp().item():.4f} r={model.log_r.exp().item():.3f}")


if __name__ == "__main__":
    main()
