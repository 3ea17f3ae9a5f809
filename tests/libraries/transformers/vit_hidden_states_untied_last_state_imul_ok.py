"""ViT does not tie its last hidden state (`tie_last_hidden_states=False`): a head reads `hidden_states[-1]`, the encoder's output, while `last_hidden_state`, the final layer norm's output (another tensor), is scaled in place."""
import torch
from transformers import ViTConfig, ViTModel

torch.manual_seed(0)
config = ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                   image_size=16, patch_size=8, num_channels=3)
model = ViTModel(config, add_pooling_layer=False)
head = torch.nn.Linear(32, 2)
out = model(pixel_values=torch.randn(2, 3, 16, 16), output_hidden_states=True)
logits = head(out.hidden_states[-1])
out.last_hidden_state.mul_(0.5)
loss = logits.sum() + out.last_hidden_state.sum()
loss.backward()
