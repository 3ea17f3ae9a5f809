"""The tracer's cost: a ResNet-18 forward (batch 8, 3×64×64, 2 threads, train mode) timed
without and with `gradguard.verify.tracer.Tracer`. Target: at most 2× (`make bench-verify`).

The verdict uses the process's CPU time, which other work on a shared machine disturbs far
less than wall time; both are printed (medians of interleaved runs).

usage: python bench/verify_overhead.py [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import torch
from torch import nn

from gradguard.verify.sites import record_constructions
from gradguard.verify.tracer import Tracer


class BasicBlock(nn.Module):
    """torchvision's BasicBlock."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


def resnet18() -> nn.Module:
    """torchvision's ResNet-18 layout: [2, 2, 2, 2] BasicBlocks, 1000 classes."""
    layers, inplanes = [], 64
    for planes, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [BasicBlock(inplanes, planes, stride), BasicBlock(planes, planes)]
        inplanes = planes
    return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                         nn.MaxPool2d(3, 2, 1), *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000))


def forward_seconds(model: nn.Module, batch: torch.Tensor, traced: bool) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one forward."""
    cpu, wall = time.process_time(), time.perf_counter()
    if traced:
        with Tracer() as tracer:
            model(batch)
        assert not tracer.hazards and tracer.saves > 100
    else:
        model(batch)
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(0)
    record_constructions()
    model = resnet18().train()
    batch = torch.randn(8, 3, 64, 64)
    for traced in (False, True, False, True):  # warm-up: allocator, kernels, the tracer's caches
        forward_seconds(model, batch, traced)
    plain, traced = [], []
    for _ in range(args.repeats):  # interleaved, so that load on the machine hits both alike
        plain.append(forward_seconds(model, batch, False))
        traced.append(forward_seconds(model, batch, True))
    print(f"ResNet-18 forward, batch 8, 3x64x64, 2 threads, {args.repeats} runs each (median); "
          f"torch {torch.__version__}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for index, clock in ((0, "CPU"), (1, "wall")):
        p, t = statistics.median(r[index] for r in plain), statistics.median(r[index] for r in traced)
        verdict = f" ({'PASS' if t / p <= 2 else 'FAIL'}: target <= 2x)" if clock == "CPU" else ""
        print(f"{clock} time: without tracer {p * 1000:.1f} ms, with tracer {t * 1000:.1f} ms, "
              f"overhead {t / p:.2f}x{verdict}")


if __name__ == "__main__":
    main()
