"""Tiny random ViT image classifier with an attention-guidance auxiliary loss: the [CLS] attention
rollout over patches is pushed towards a (synthetic) foreground mask, on top of the `labels=` loss."""
import sys; sys.modules["torchvision"] = None

import torch
import torch.nn.functional as F
from transformers import ViTConfig, ViTForImageClassification


def attention_rollout(attentions, residual_weight=1.0):
    """attentions: tuple of [B, heads, T, T] from output_attentions=True."""
    per_layer = torch.stack(attentions).mean(dim=2).unbind(0)  # L x [B, T, T]
    tokens = per_layer[0].size(-1)
    eye = torch.eye(tokens).unsqueeze(0)
    rollout = eye.expand_as(per_layer[0])
    for attn in per_layer:
        attn += residual_weight * eye  # expect: GG003
        attn = attn / attn.sum(dim=-1, keepdim=True)
        rollout = attn @ rollout
    return rollout[:, 0, 1:]  # CLS -> patches


def synthetic_foreground(batch, grid):
    mask = torch.zeros(batch, grid, grid)
    for b in range(batch):
        r, c = torch.randint(0, grid - 1, (2,)).tolist()
        mask[b, r:r + 2, c:c + 2] = 1.0
    return mask.flatten(1)


def main():
    torch.manual_seed(0)
    config = ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=32,
                       num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                       num_labels=4, attn_implementation="eager")
    model = ViTForImageClassification(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    grid = config.image_size // config.patch_size
    guidance_weight = 0.5

    pixel_values = torch.randn(4, 3, 16, 16)
    labels = torch.randint(0, config.num_labels, (4,))
    fg = synthetic_foreground(4, grid)

    model.train()
    out = model(pixel_values=pixel_values, labels=labels, output_attentions=True)
    relevance = attention_rollout(out.attentions)
    relevance = relevance / relevance.sum(-1, keepdim=True)
    target = fg / fg.sum(-1, keepdim=True)
    guide_loss = F.kl_div(relevance.clamp_min(1e-8).log(), target, reduction="batchmean")

    loss = out.loss + guidance_weight * guide_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


if __name__ == "__main__":
    main()
