"""A DQN update computes the bootstrap target with grad still on and then hard-copies the online weights into the target net before the backward; the target net's Linear had saved those weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def q_network(obs_dim, n_actions, hidden=32):
    return nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_actions))


class DQNAgent:
    def __init__(self, obs_dim, n_actions, gamma=0.99, sync_every=1):
        self.online = q_network(obs_dim, n_actions)
        self.target = q_network(obs_dim, n_actions)
        self.target.load_state_dict(self.online.state_dict())
        self.opt = torch.optim.Adam(self.online.parameters(), lr=1e-3)
        self.gamma, self.sync_every, self.updates = gamma, sync_every, 0

    def sync_target(self):
        with torch.no_grad():
            for tp, p in zip(self.target.parameters(), self.online.parameters()):
                tp.copy_(p)  # expect: GG001

    def update(self, obs, actions, rewards, next_obs, dones):
        q = self.online(obs).gather(1, actions[:, None]).squeeze(1)
        next_q = self.target(next_obs).max(dim=1).values
        td_target = rewards + self.gamma * (1 - dones) * next_q
        loss = F.smooth_l1_loss(q, td_target)
        self.updates += 1
        if self.updates % self.sync_every == 0:
            self.sync_target()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


torch.manual_seed(0)
agent = DQNAgent(obs_dim=4, n_actions=3)
batch = (torch.randn(32, 4), torch.randint(0, 3, (32,)), torch.randn(32), torch.randn(32, 4), torch.zeros(32))
agent.update(*batch)
