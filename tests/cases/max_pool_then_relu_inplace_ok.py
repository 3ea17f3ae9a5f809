"""max_pool2d saves its input and its indices, not its output: ReLU(inplace) on the pooled map is safe."""
import torch
import torch.nn as nn
import torch.nn.functional as F

conv = nn.Conv2d(3, 4, 3)
g = F.max_pool2d(conv(torch.randn(1, 3, 8, 8)), kernel_size=2, stride=2)
g = F.relu(g, inplace=True)
g.sum().backward()
