"""DQN with an experience replay memory and a periodically synced target network, modelled on
the PyTorch "Reinforcement Learning (DQN)" tutorial but with a tiny fake CartPole-like env."""
import math
import random
from collections import namedtuple, deque
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
random.seed(0)
Transition = namedtuple('Transition', ('state', 'action', 'next_state', 'reward'))

class ReplayMemory(object):
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)

class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super().__init__()
        self.layer1 = nn.Linear(n_observations, 64)
        self.layer2 = nn.Linear(64, 64)
        self.layer3 = nn.Linear(64, n_actions)

    def forward(self, x):
        x = torch.relu(self.layer1(x))
        x = torch.relu(self.layer2(x))
        return self.layer3(x)

BATCH_SIZE, GAMMA, EPS_START, EPS_END, EPS_DECAY, LR, SYNC_EVERY = 16, 0.99, 0.9, 0.05, 200, 1e-3, 5
n_observations, n_actions = 4, 2
policy_net = DQN(n_observations, n_actions)
target_net = DQN(n_observations, n_actions)
target_net.load_state_dict(policy_net.state_dict())
optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
memory = ReplayMemory(1000)
steps_done = 0

def select_action(state):
    global steps_done
    eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
    steps_done += 1
    if random.random() > eps_threshold:
        with torch.no_grad():
            return policy_net(state).max(1).indices.view(1, 1)
    return torch.tensor([[random.randrange(n_actions)]], dtype=torch.long)

def optimize_model(sync_target=False):
    if len(memory) < BATCH_SIZE:
        return None
    batch = Transition(*zip(*memory.sample(BATCH_SIZE)))
    non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)

    next_state_values = torch.zeros(BATCH_SIZE)
    next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected_state_action_values = (next_state_values * GAMMA) + reward_batch
    if sync_target:
        target_net.load_state_dict(policy_net.state_dict())  # expect: GG001

    state_action_values = policy_net(state_batch).gather(1, action_batch)
    loss = nn.SmoothL1Loss()(state_action_values, expected_state_action_values.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()
    return loss.item()

# fake environment rollout loop
for i_episode in range(3):
    state = torch.randn(1, n_observations)
    for t in range(12):
        action = select_action(state)
        reward = torch.tensor([random.random()])
        terminated = t == 11 or random.random() < 0.05
        next_state = None if terminated else state + 0.1 * torch.randn(1, n_observations)
        memory.push(state, action, next_state, reward)
        state = next_state
        loss = optimize_model(sync_target=(steps_done % SYNC_EVERY == 0))
        if terminated:
            break
    print(f"episode {i_episode} len {t + 1} last loss {loss}")
