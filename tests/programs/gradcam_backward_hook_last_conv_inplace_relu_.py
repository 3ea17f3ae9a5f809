"""Grad-CAM on a small CNN: a full backward hook on the last convolution records the gradient of its output,
a forward hook its activations. The conv is followed by `nn.ReLU(inplace=True)`; a fully backward-hooked
module hands its output on as a view of a `BackwardHookFunction`, and torch refuses to let the ReLU change it
in place ("Output 0 of BackwardHookFunction is a view and is being modified inplace")."""
import torch
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(inplace=True),  # expect: GG003
        )
        self.classifier = nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x).mean(dim=(2, 3)))


store = {}


def save_activation(module, inputs, output):
    store["activation"] = output.detach()


def save_gradient(module, grad_input, grad_output):
    store["gradient"] = grad_output[0].detach()


torch.manual_seed(0)
model = SmallCNN()
target_layer = model.features[3]
target_layer.register_forward_hook(save_activation)
target_layer.register_full_backward_hook(save_gradient)
image = torch.randn(1, 3, 32, 32)
scores = model(image)
scores[0, scores.argmax()].backward()
weights = store["gradient"].mean(dim=(2, 3), keepdim=True)
cam = torch.relu((weights * store["activation"]).sum(dim=1))
