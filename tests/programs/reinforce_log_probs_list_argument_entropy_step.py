"""A REINFORCE rollout step, chosen by a command-line option, appends each action's log-probability
to the caller's list and takes an entropy-bonus step on the policy right away; the episode's
policy-gradient backward then runs through the stored log-probabilities into the stepped weights."""
import argparse

import torch
import torch.nn as nn


policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
optimizer = torch.optim.SGD(policy.parameters(), lr=1e-2)


def act_with_entropy_bonus(obs, log_probs, beta=0.01):
    dist = torch.distributions.Categorical(logits=policy(obs))
    action = dist.sample()
    log_probs.append(dist.log_prob(action))
    bonus = -beta * dist.entropy().mean()
    optimizer.zero_grad()
    bonus.backward(retain_graph=True)
    optimizer.step()  # expect: GG001
    return action


parser = argparse.ArgumentParser()
parser.add_argument("--step", default="act_with_entropy_bonus")
args = parser.parse_args()
log_probs = []
for t in range(3):
    globals()[args.step](torch.randn(1, 4), log_probs)
returns = torch.tensor([1.0, 0.5, 0.25])
loss = -(torch.cat(log_probs) * returns).sum()
loss.backward()
