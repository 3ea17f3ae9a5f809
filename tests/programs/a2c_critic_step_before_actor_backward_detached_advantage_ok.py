"""An advantage actor-critic agent with one optimizer per head steps the critic before the actor's
backward, but the actor's loss uses the detached advantage, so its backward never reaches the
critic's weights the step changed."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return F.softmax(self.pi(h), dim=-1), self.v(h)


class Agent:
    def __init__(self, obs_dim, n_actions):
        self.net = ActorCritic(obs_dim, n_actions)
        self.actor_opt = torch.optim.Adam(list(self.net.body.parameters()) + list(self.net.pi.parameters()), lr=1e-3)
        self.critic_opt = torch.optim.Adam(self.net.v.parameters(), lr=1e-3)

    def update(self, obs, returns):
        probs, values = self.net(obs)
        dist = torch.distributions.Categorical(probs)
        actions = dist.sample()
        advantage = returns - values
        critic_loss = advantage.pow(2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward(retain_graph=True)
        self.critic_opt.step()
        actor_loss = -(dist.log_prob(actions) * advantage.detach().squeeze(-1)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()


torch.manual_seed(0)
agent = Agent(4, 2)
for _ in range(2):
    agent.update(torch.randn(16, 4), torch.randn(16, 1))
