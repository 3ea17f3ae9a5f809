"""A function is judged in its callers' contexts: one the file refers to only where grad is off runs
with grad off, and one with no known caller gets tensors that may require grad only with evidence,
its findings saying they come from a standalone analysis (`analysis/callers.py`)."""

from __future__ import annotations

from helpers import run, write

_NORMALISE = """\
import torch


def _normalise_(x):
    scale = x.norm()
    x.div_(scale)
    return x
"""


def _check(tmp_path, text: str) -> list[str]:
    write(tmp_path / "m.py", text)
    proc = run("check", "--no-cache", "--no-config", "--output-format", "concise", "m.py", cwd=tmp_path)
    return [line for line in proc.stdout.splitlines() if line.startswith("m.py:")]


def test_helper_referred_to_only_under_no_grad_runs_with_grad_off(tmp_path):
    """Called from a `@torch.no_grad()` step through a dispatch, and from a `with torch.no_grad():` block."""
    assert _check(tmp_path, _NORMALISE + """

def update(params, foreach):
    func = _normalise_ if foreach else _normalise_
    for p in params:
        func(p.grad)


class Normalised(torch.optim.Optimizer):
    @torch.no_grad()
    def step(self, closure=None):
        update(self.param_groups[0]["params"], True)


def compute_loss(pred):
    with torch.no_grad():
        _normalise_(pred.detach().clone())
    return pred.sum()
""") == []


def test_helper_also_referred_to_with_grad_on_keeps_its_warning(tmp_path):
    assert _check(tmp_path, _NORMALISE + """

def compute_loss(pred):
    with torch.no_grad():
        _normalise_(pred.clone())
    return _normalise_(pred).sum()
""") == ["m.py:6:5: GG001 [warning] [*] `x` is the input of `x.norm` (line 5), which it saves for backward; `div_` "
         "changes it in place, so `backward()` may raise \"one of the variables needed for gradient computation has been modified by an inplace operation\" (whether it was saved depends on which tensors require grad "
         "here; this holds if a backward pass later runs through it; found analysing `compute_loss` on its own: no "
         "caller of it is known)."]


def test_standalone_function_needs_evidence_that_its_tensors_require_grad(tmp_path):
    """A data helper with no caller: no finding; the same code in a loss says it was analysed on its own."""
    assert _check(tmp_path, _NORMALISE) == []
    assert _check(tmp_path, _NORMALISE.replace("_normalise_", "normalised_loss")) == [
        "m.py:6:5: GG001 [warning] [*] `x` is the input of `x.norm` (line 5), which it saves for backward; `div_` "
        "changes it in place, so `backward()` may raise \"one of the variables needed for gradient computation has been modified by an inplace operation\" (whether it was saved depends on which tensors require grad "
        "here; this holds if a backward pass later runs through it; found analysing `normalised_loss` on its own: no "
        "caller of it is known)."]


_GATE = """\
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, d, uniform_init=False, init_mode="zeros"):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(d))
        self.weight = nn.Parameter(torch.empty(d, d))
        if uniform_init:
            self.bias.uniform_(-0.1, 0.1)
        if init_mode == "zeros":
            nn.init.zeros_(self.weight)
        else:
            self.weight.normal_(0.0, 0.02)

    def forward(self, x):
        return torch.sigmoid(x @ self.weight + self.bias) * x
"""
_NOT_DEFAULT = ("`{name}` is a leaf that requires grad (an `nn.Parameter`); `{verb}` changes it in place outside "
                "`torch.no_grad()`, so PyTorch {raises} \"a leaf Variable that requires grad is being used in an "
                "in-place operation\"")


def test_a_default_is_one_value_of_a_parameter_when_no_caller_is_known(tmp_path):
    """The branches a default skips (`if uniform_init:`, the `else` of `init_mode == "zeros"`) are
    analysed too, their findings warnings that say they need another value; a caller decides."""
    standalone = " (only when `{param}` is given a value other than its default; found analysing `__init__` on its " \
                 "own: no caller of it is known)."
    assert _check(tmp_path, _GATE) == [
        "m.py:11:13: GG002 [warning] [*] " + _NOT_DEFAULT.format(name="self.bias", verb="uniform_", raises="raises")
        + standalone.format(param="uniform_init"),
        "m.py:15:13: GG002 [warning] [*] " + _NOT_DEFAULT.format(name="self.weight", verb="normal_", raises="raises")
        + standalone.format(param="init_mode")]
    assert _check(tmp_path, _GATE + "\ngate = Gate(8)\n") == []
    assert _check(tmp_path, _GATE + "\ngate = Gate(8, uniform_init=True)\n") == [
        "m.py:11:13: GG002 [error] [*] " + _NOT_DEFAULT.format(name="self.bias", verb="uniform_", raises="raises")
        + "."]


def test_a_branch_a_default_skips_binds_nothing_for_the_code_after_it(tmp_path):
    """`nn.init` and `no_grad` there are safe, and the layer it would pick does not reach `forward`."""
    assert _check(tmp_path, """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d, zero_init=False, inplace=False):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.act = nn.Sigmoid()
        if zero_init:
            nn.init.zeros_(self.fc.weight)
            with torch.no_grad():
                self.fc.bias.zero_()
        if inplace:
            self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        return self.act(h) + h
""") == []


_DISPATCH = """\
import torch
import torch.nn as nn


def _scale_(x):
    x.div_(x.norm())
    return x


def _scale(x):
    return x / x.norm()


class Block(nn.Module):
    def __init__(self, inplace_norm):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.inplace_norm = inplace_norm

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        scale = _scale_ if self.inplace_norm else _scale
        return scale(h)


block = Block(inplace_norm=torch.rand(()).item() > 0.5)
block(torch.randn(2, 8)).sum().backward()
"""


def test_a_call_through_a_dispatch_runs_each_function_it_may_pick(tmp_path):
    """`scale = _scale_ if flag else _scale; scale(h)` with `flag` unknown (a coin here): both run, with the
    caller's tensors, and what one of them changes may not happen (a warning)."""
    assert _check(tmp_path, _DISPATCH) == [
        "m.py:6:5: GG001 [warning] [*] `x` is the output of `torch.tanh` (line 21), which it saves for backward; "
        "`div_` changes it in place, so `backward()` may raise \"one of the variables needed for gradient computation "
        "has been modified by an inplace operation\" (only when the function picked by a value not known here is the "
        "one that runs this code)."]
    assert _check(tmp_path, _DISPATCH.replace("    x.div_(x.norm())\n    return x", "    return x / x.norm()")) == []


def test_helper_bound_with_partial_in_init_and_called_only_in_a_no_grad_step_runs_with_grad_off(tmp_path):
    """An optimizer of a library (nothing calls it here): its step follows `self.update`, the partial."""
    optimizer = """\
import functools

import torch


def _lamb_update(param, grad, lr, weight_decay):
    update = grad + weight_decay * param
    trust = param.norm() / update.norm()
    param.add_(update * trust, alpha=-lr)


class Lamb:
    def __init__(self, params, lr=1e-2, weight_decay=0.01):
        self.params = list(params)
        self.lr = lr
        self.update = functools.partial(_lamb_update, weight_decay=weight_decay)

    @torch.no_grad()
    def step(self):
        for p in self.params:
            self.update(p, p.grad, self.lr)
"""
    assert _check(tmp_path, optimizer) == []
    assert _check(tmp_path, optimizer.replace("    @torch.no_grad()\n", "")) == [
        "m.py:9:5: GG001 [warning] [*] `param` is the input of `param.norm` (line 8), which it saves for backward; "
        "`add_` changes it in place, so `backward()` may raise \"one of the variables needed for gradient computation has been modified by an inplace operation\" (whether it was saved depends on which tensors "
        "require grad here; this holds if a backward pass later runs through it; found analysing `step` on its own: "
        "no caller of it is known)."]
