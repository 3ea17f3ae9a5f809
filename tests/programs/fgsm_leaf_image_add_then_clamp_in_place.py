"""Adversarial example notebook: a small LeNet-style MNIST classifier (random weights and data),
PGD examples built with the usual x_adv.data updates, then the FGSM accuracy-vs-epsilon sweep from the tutorial."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
epsilons = [0, .05, .1, .2]

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(16 * 5 * 5, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)

model = Net()
model.eval()
test_images = [torch.rand(1, 1, 14, 14) for _ in range(6)]
with torch.no_grad():  # no MNIST offline: use the clean predictions as the "true" labels
    test_loader = [(img, model(img).argmax(1)) for img in test_images]

# %% PGD (L_inf) on a batch, Madry et al. style
def pgd_attack(model, x, y, eps=0.1, alpha=0.02, steps=5):
    x_adv = x.clone().detach() + 0.001 * torch.randn_like(x)
    x_adv.requires_grad = True
    for _ in range(steps):
        loss = F.nll_loss(model(x_adv), y)
        if x_adv.grad is not None:
            x_adv.grad.zero_()
        loss.backward()
        x_adv.data = x_adv.data + alpha * x_adv.grad.sign()
        eta = torch.clamp(x_adv.data - x.data, -eps, eps)
        x_adv.data = torch.clamp(x.data + eta, 0, 1)
    return x_adv.detach()

xb = torch.cat([d for d, _ in test_loader])
yb = torch.cat([t for _, t in test_loader])
x_pgd = pgd_attack(model, xb, yb)
print("PGD acc:", (model(x_pgd).argmax(1) == yb).float().mean().item())

# %% FGSM sweep
def fgsm_attack(image, epsilon, data_grad):
    sign_data_grad = data_grad.sign()
    image.add_(epsilon * sign_data_grad)  # expect: GG002
    image.clamp_(0, 1)
    return image

def test(model, test_loader, epsilon):
    correct = 0
    adv_examples = []
    for data, target in test_loader:
        data.requires_grad = True
        output = model(data)
        init_pred = output.max(1, keepdim=True)[1]
        if init_pred.item() != target.item():
            continue
        loss = F.nll_loss(output, target)
        model.zero_grad()
        loss.backward()
        data_grad = data.grad.data
        perturbed_data = fgsm_attack(data, epsilon, data_grad)
        output = model(perturbed_data)
        final_pred = output.max(1, keepdim=True)[1]
        if final_pred.item() == target.item():
            correct += 1
        elif len(adv_examples) < 5:
            adv_examples.append((init_pred.item(), final_pred.item(), perturbed_data.squeeze().detach()))
    final_acc = correct / float(len(test_loader))
    print(f"Epsilon: {epsilon}\tTest Accuracy = {correct} / {len(test_loader)} = {final_acc}")
    return final_acc, adv_examples

accuracies = []
for eps in epsilons:
    acc, ex = test(model, test_loader, eps)
    accuracies.append(acc)
