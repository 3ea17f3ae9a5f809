"""An actor-critic update normalises its advantages out of place, so the tensor std() saved for
backward is never changed; the critic learns from the raw advantages."""
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2, hidden=64):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.actor = nn.Linear(hidden, n_actions)
        self.critic = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.shared(obs)
        return torch.log_softmax(self.actor(h), dim=-1), self.critic(h).squeeze(-1)


def discounted_returns(rewards, gamma=0.99):
    returns, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        returns.insert(0, running)
    return torch.tensor(returns)


def finish_episode(policy, optimizer, observations, actions, rewards, eps=1e-8):
    log_probs, values = policy(observations)
    chosen = log_probs.gather(1, actions.unsqueeze(1)).squeeze(1)
    returns = discounted_returns(rewards)
    advantages = returns - values
    normalised = (advantages - advantages.mean()) / (advantages.std() + eps)
    actor_loss = -(chosen * normalised.detach()).mean()
    critic_loss = advantages.pow(2).mean()
    optimizer.zero_grad()
    (actor_loss + critic_loss).backward()
    optimizer.step()


torch.manual_seed(0)
policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
observations = torch.randn(20, 4)
actions = torch.randint(0, 2, (20,))
rewards = [1.0] * 20
finish_episode(policy, optimizer, observations, actions, rewards)
