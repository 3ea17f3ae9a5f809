"""A rollout step, chosen by a command-line option, appends each sampled action (no graph) to the
caller's list and takes an entropy-bonus step on the policy right away; the graph it kept dies
with the step, and the policy-gradient loss is computed afresh from the stored actions."""
import argparse

import torch
import torch.nn as nn


policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
optimizer = torch.optim.SGD(policy.parameters(), lr=1e-2)


def act_with_entropy_bonus(obs, actions, beta=0.01):
    dist = torch.distributions.Categorical(logits=policy(obs))
    action = dist.sample()
    actions.append(action)
    bonus = -beta * dist.entropy().mean()
    optimizer.zero_grad()
    bonus.backward(retain_graph=True)
    optimizer.step()
    return action


parser = argparse.ArgumentParser()
parser.add_argument("--step", default="act_with_entropy_bonus")
args = parser.parse_args()
actions = []
for t in range(3):
    globals()[args.step](torch.randn(1, 4), actions)
returns = torch.tensor([1.0, 0.5, 0.25])
logits = policy(torch.randn(3, 4))
loss = -(torch.log_softmax(logits, -1).gather(1, torch.cat(actions)[:, None]).squeeze(1) * returns).sum()
loss.backward()
