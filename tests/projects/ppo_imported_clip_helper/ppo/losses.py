"""PPO's loss pieces, shared by the training scripts."""
import torch


def clip_ratio_(ratio, eps):
    """Clip the probability ratio into [1 - eps, 1 + eps] in place and return it."""
    return ratio.clamp_(1 - eps, 1 + eps)


def clipped_surrogate(ratio, clipped, advantages):
    return -torch.min(ratio * advantages, clipped * advantages).mean()
