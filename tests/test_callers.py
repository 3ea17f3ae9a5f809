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
         "changes it in place, so `backward()` may raise (whether it was saved depends on which tensors require grad "
         "here; this holds if a backward pass later runs through it; found analysing `compute_loss` on its own: no "
         "caller of it is known)."]


def test_standalone_function_needs_evidence_that_its_tensors_require_grad(tmp_path):
    """A data helper with no caller: no finding; the same code in a loss says it was analysed on its own."""
    assert _check(tmp_path, _NORMALISE) == []
    assert _check(tmp_path, _NORMALISE.replace("_normalise_", "normalised_loss")) == [
        "m.py:6:5: GG001 [warning] [*] `x` is the input of `x.norm` (line 5), which it saves for backward; `div_` "
        "changes it in place, so `backward()` may raise (whether it was saved depends on which tensors require grad "
        "here; this holds if a backward pass later runs through it; found analysing `normalised_loss` on its own: no "
        "caller of it is known)."]
