"""An agent's rollout is a generator method yielding the policy's softmax probabilities and the critic's value at each step; the training loop clamps the probabilities out of place, and steps the optimizer after each backward, before the generator runs the policy again."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=6, n_actions=3, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


class Agent:
    def __init__(self, obs_dim=6, n_actions=3, lr=1e-3):
        self.net = ActorCritic(obs_dim, n_actions)
        self.opt = torch.optim.RMSprop(self.net.parameters(), lr=lr)

    def rollout(self, observations):
        for obs in observations:
            logits, value = self.net(obs)
            yield F.softmax(logits, dim=-1), value

    def train_episode(self, observations, rewards):
        for step, (probs, value) in enumerate(self.rollout(observations)):
            probs = probs.clamp(min=1e-6)
            action = torch.multinomial(probs.detach(), 1).squeeze(-1)
            log_prob = probs.gather(-1, action.unsqueeze(-1)).squeeze(-1).log()
            advantage = rewards[step] - value
            loss = -(log_prob * advantage.detach()).mean() + advantage.pow(2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


torch.manual_seed(0)
agent = Agent()
agent.train_episode(torch.randn(4, 8, 6), torch.randn(4, 8))
