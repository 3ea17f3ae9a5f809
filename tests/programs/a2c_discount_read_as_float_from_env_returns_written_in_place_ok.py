"""A2C with one combined loss: returns are written in place from rewards that a comparison made
(`(x > 0).float()`) and a discount read with `float(os.environ.get(...))`, and the advantages
normalised in place: none of them is in the graph, so every change is safe."""
import os
import torch
import torch.nn as nn
import torch.nn.functional as F

HP = dict(obs=int(os.environ.get("OBS", 5)), actions=int(os.environ.get("ACTIONS", 3)),
          hidden=32, gamma=float(os.environ.get("GAMMA", 0.95)), T=int(os.environ.get("T", 16)),
          value_coef=0.5, entropy_coef=float(os.environ.get("ENT", 0.01)), updates=2)
torch.manual_seed(10)


class Policy(nn.Module):
    def __init__(self, obs, actions, hidden=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs, hidden), nn.ReLU(inplace=True),
                                  nn.Linear(hidden, hidden), nn.ReLU(inplace=True))
        self.pi = nn.Linear(hidden, actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.body(x)
        return self.pi(h), self.v(h).squeeze(-1)


def rollout(policy, T=16, obs_dim=5):
    obs = torch.randn(T, obs_dim)
    logits, values = policy(obs)
    probs = F.softmax(logits, dim=-1)
    actions = torch.multinomial(probs.detach(), 1).squeeze(-1)
    rewards = (obs[torch.arange(T), actions] > 0).float()
    return {"logits": logits, "values": values, "actions": actions, "rewards": rewards}


def compute_returns(rewards, last_value=0.0, gamma=0.99):
    returns = torch.zeros(len(rewards) + 1)
    returns[-1] = last_value
    for i in reversed(range(len(rewards))):
        returns[i] = rewards[i] + gamma * returns[i + 1]
    return returns[:-1]


def normalize_(t, eps=1e-8):
    t -= t.mean()
    t /= t.std() + eps
    return t


policy = Policy(HP["obs"], HP["actions"], HP["hidden"])
optimizer = torch.optim.Adam(policy.parameters(), lr=7e-4)

for update in range(HP["updates"]):
    roll = rollout(policy, HP["T"], HP["obs"])
    returns = compute_returns(roll["rewards"], gamma=HP["gamma"])
    advantages = normalize_(returns - roll["values"].detach())

    log_probs = F.log_softmax(roll["logits"], dim=-1)
    chosen = log_probs.gather(1, roll["actions"][:, None]).squeeze(1)
    entropy = -(log_probs.exp() * log_probs).sum(-1).mean()

    loss = 0
    loss += -(chosen * advantages).mean()
    loss += HP["value_coef"] * F.mse_loss(roll["values"], returns)
    loss -= HP["entropy_coef"] * entropy

    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
    optimizer.step()
    print(update, float(loss))
