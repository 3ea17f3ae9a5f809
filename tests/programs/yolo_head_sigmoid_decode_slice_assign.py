"""A YOLO-style detection head decodes its boxes during training the way the inference code does,
writing the decoded centres and sizes back into the sigmoid output: sigmoid saved that output for
backward, so the box loss's backward fails. Only the first write is marked: a saved output is
reported at the first change that breaks it."""
import torch
import torch.nn as nn


class DetectHead(nn.Module):
    def __init__(self, in_ch=16, n_anchors=3, n_classes=4, stride=8):
        super().__init__()
        self.no = n_classes + 5
        self.na = n_anchors
        self.stride = stride
        self.conv = nn.Conv2d(in_ch, self.na * self.no, 1)
        self.register_buffer("anchors", torch.tensor([[10.0, 13.0], [16.0, 30.0], [33.0, 23.0]]).view(1, 3, 1, 1, 2))

    def grid(self, ny, nx):
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        return torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).float()

    def forward(self, feats):
        bs, _, ny, nx = feats.shape
        p = self.conv(feats).view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        y = p.sigmoid()
        y[..., 0:2] = (y[..., 0:2] * 2 - 0.5 + self.grid(ny, nx)) * self.stride  # expect: GG001
        y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchors
        return y


def box_loss(pred, target_boxes, obj_mask):
    return ((pred[..., :4] - target_boxes) ** 2)[obj_mask].mean() + nn.functional.binary_cross_entropy(
        pred[..., 4], obj_mask.float())


torch.manual_seed(0)
backbone = nn.Sequential(nn.Conv2d(3, 16, 3, stride=8, padding=1), nn.SiLU())
head = DetectHead()
opt = torch.optim.SGD([*backbone.parameters(), *head.parameters()], lr=0.01)
images = torch.randn(2, 3, 64, 64)
pred = head(backbone(images))
obj_mask = torch.rand(pred.shape[:-1]) > 0.9
loss = box_loss(pred, torch.rand(*pred.shape[:-1], 4) * 64, obj_mask)
opt.zero_grad()
loss.backward()
opt.step()
