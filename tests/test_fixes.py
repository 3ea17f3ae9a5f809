"""Every fix gradguard offers is proven by running it.

For every offered fix on every marked case of the shared corpus and of tests/cases/, each run
seeded: the fixed program runs cleanly; for a safe GG001 fix, the losses passed to backward()
and the gradients of the leaves equal those of the original program run with the values the
user meant: every saved tensor as it was when the op saved it. An unsafe fix may change values
but must run cleanly too. Every fix must also make gradguard drop the finding and must not
rebind torch's names or the program's imports. A fix that fails is an analyzer bug (a broken
edit, or a wrong applicability when a safe fix changes values): it is listed in BROKEN_FIXES
and runs as a strict xfail until the analyzer is fixed.

The values the user meant are what `torch.autograd.graph.allow_mutation_on_saved_tensors()`
promises (it clones a saved tensor when it is mutated), but that context manager misses a
mutation made through a view of the saved tensor (`y[1] += 1` on exp's output gives the mutated
values). So the reference run clones each tensor when it is saved, with
`torch.autograd.graph.saved_tensors_hooks`, and test_reference_agrees_with_allow_mutation
checks that allow_mutation_on_saved_tensors gives the same values on every case but the ones
where torch misses the mutation (strict xfails).

The programs run in-process (`runpy.run_path`), so torch is imported once per worker.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import functools
import json
import random
import runpy
import shutil
import subprocess
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gradguard.config import Settings
from gradguard.engine import analyse_document
from gradguard.findings import Applicability, Finding, Fix
from gradguard.fixes.edits import apply_edits
from gradguard.source.document import Document

from helpers import CORPUS, GRADGUARD, MARK, ROOT, import_file, shared_corpus

torch = pytest.importorskip("torch")
nn = torch.nn

SOURCES = {"corpus": CORPUS / "cases", "own": ROOT / "tests" / "cases"}


@functools.cache
def family_messages() -> dict[str, tuple[str, ...]]:
    """The corpus's label.py MESSAGES: which RuntimeError text belongs to which rule."""
    return import_file(CORPUS / "label.py", "corpus_label").MESSAGES


# Offered fixes that fail their proof: "<source>/<case>:<line>:<code>: <fix message>" -> why.
# Each is an analyzer bug (a broken edit, or a wrong applicability) and runs as a strict xfail:
# delete the entry once the analyzer is fixed.
BROKEN_FIXES: dict[str, str] = {}

# `gradguard check --fix` on a folder of cases leaves a finding that has a safe fix: source -> why.
FIX_RUN_GAPS: dict[str, str] = {}

# GG001 cases where allow_mutation_on_saved_tensors gives the mutated values: "<source>/<case>" -> why.
TORCH_MISSES: dict[str, str] = {
    "own/exp_index_iadd": "`y[1] += 1.0` changes exp's saved output through the view `y[1]`, and backward "
                          "reads the changed row",
}

# Shrinking coverage fails: at least this many fixes are offered and proven on the marked cases,
# and at least this many of them are safe GG001 fixes proven equal in value. Raise them when
# the analyzer offers more.
MIN_FIXES = 120
MIN_VALUE_CHECKED = 61


# --- the offered fixes ---------------------------------------------------------------------------

@dataclass(frozen=True)
class OfferedFix:
    source: str
    path: Path
    finding: Finding
    index: int
    fix: Fix

    @property
    def id(self) -> str:
        return (f"{self.source}/{self.path.stem}:{self.finding.span.start.line}:{self.finding.code}:"
                f"fix{self.index}-{self.fix.applicability.value}")

    @property
    def key(self) -> str:
        return f"{self.source}/{self.path.stem}:{self.finding.span.start.line}:{self.finding.code}: {self.fix.message}"

    @property
    def value_checked(self) -> bool:
        return self.finding.code == "GG001" and self.fix.applicability is Applicability.SAFE


def marked_cases() -> list[tuple[str, Path]]:
    return [(source, path) for source, folder in SOURCES.items() for path in sorted(folder.glob("*.py"))
            if MARK.search(path.read_text(encoding="utf-8"))]


def offered_fixes() -> list[OfferedFix]:
    offered = []
    for source, path in marked_cases():
        text = path.read_text(encoding="utf-8")
        for finding in analyse_document(Document.parse(str(path), text), Settings()):
            offered += [OfferedFix(source, path, finding, i, fix) for i, fix in enumerate(finding.fixes)]
    return offered


OFFERED = offered_fixes()


def _param(offered: OfferedFix):
    marks = ()
    if offered.key in BROKEN_FIXES:
        marks = pytest.mark.xfail(strict=True, reason=f"analyzer bug: {BROKEN_FIXES[offered.key]}")
    return pytest.param(offered, id=offered.id, marks=marks)


# --- running a program in-process ----------------------------------------------------------------

@dataclass
class Run:
    """What a program did: the exception it raised, the losses it passed to backward, its leaves' grads."""

    error: BaseException | None = None
    trace: str = ""
    losses: list = field(default_factory=list)
    grads: dict = field(default_factory=dict)
    clobbered: list = field(default_factory=list)  # torch attributes or imported names the program rebound


# What a program must never rebind: it runs in this process, so the next programs would see it.
GUARDED = {"torch": torch, "torch.nn": nn, "torch.nn.functional": nn.functional, "torch.nn.init": nn.init,
           "torch.autograd": torch.autograd, "torch.Tensor": torch.Tensor, "torch.nn.Module": nn.Module}


def _warm_up_torch() -> None:
    """Let torch make its lazy, one-time rebindings (the first optimizer step wraps `torch.manual_seed`
    for dynamo) before any snapshot, so they are not mistaken for the program's."""
    weight = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([weight], lr=0.1)
    (weight * 2).sum().backward()
    optimizer.step()


_warm_up_torch()


def _snapshot() -> dict[str, dict]:
    return {name: dict(vars(namespace)) for name, namespace in GUARDED.items()}


def _restore(snapshot: dict[str, dict]) -> list[str]:
    """Put back every guarded attribute the program replaced or deleted; name them."""
    changed = []
    for name, before in snapshot.items():
        namespace, now = GUARDED[name], vars(GUARDED[name])
        for key, value in before.items():
            if key not in now or now[key] is not value:
                changed.append(f"{name}.{key}")
                setattr(namespace, key, value)
    return changed


def _imported_names(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(alias.asname or alias.name).split(".")[0] for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names]


def _leaf_grads(variables: dict) -> dict:
    """`.grad` of the leaves that require grad among the globals and the parameters of modules there."""
    grads = {}
    for name in sorted(variables):
        value = variables[name]
        if name.startswith("__"):
            continue
        if isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad:
            grads[name] = value.grad
        elif isinstance(value, nn.Module):
            for parameter_name, parameter in value.named_parameters():
                grads[f"{name}.{parameter_name}"] = parameter.grad
    return {name: None if grad is None else grad.detach().clone() for name, grad in grads.items()}


def _clone_on_save():
    """Saved tensors cloned when saved: backward reads the values as they were then."""
    return torch.autograd.graph.saved_tensors_hooks(lambda tensor: tensor.clone(), lambda tensor: tensor)


SAVED_TENSOR_MODES = {
    "as-is": contextlib.nullcontext,
    "clone-on-save": _clone_on_save,
    "allow-mutation": lambda: torch.autograd.graph.allow_mutation_on_saved_tensors(),
}


def run_program(path: Path, *, saved_tensors: str = "as-is") -> Run:
    """Run `path` as `__main__`, seeded, recording every tensor passed to backward."""
    run = Run()
    tensor_backward, autograd_backward = torch.Tensor.backward, torch.autograd.backward
    depth = [0]  # Tensor.backward calls torch.autograd.backward: record the outermost call only

    def record(tensors):
        if depth[0] == 0:
            for tensor in (tensors,) if isinstance(tensors, torch.Tensor) else tuple(tensors):
                run.losses.append(tensor.detach().clone())

    def patched_tensor_backward(self, *args, **kwargs):
        record(self)
        depth[0] += 1
        try:
            return tensor_backward(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    def patched_autograd_backward(tensors, *args, **kwargs):
        record(tensors)
        depth[0] += 1
        try:
            return autograd_backward(tensors, *args, **kwargs)
        finally:
            depth[0] -= 1

    grad_enabled, default_dtype = torch.is_grad_enabled(), torch.get_default_dtype()
    snapshot = _snapshot()
    torch.Tensor.backward, torch.autograd.backward = patched_tensor_backward, patched_autograd_backward
    try:
        torch.manual_seed(0)
        random.seed(0)
        with SAVED_TENSOR_MODES[saved_tensors]():
            variables = runpy.run_path(str(path), run_name="__main__")
        run.grads = _leaf_grads(variables)
        run.clobbered = [name for name in _imported_names(path)
                         if name in variables and isinstance(variables[name], torch.Tensor)]
    except Exception as error:  # the program's own failure is the result
        run.error = error
        run.trace = _program_trace(error, path)
    finally:
        GUARDED["torch.Tensor"].backward = tensor_backward
        GUARDED["torch.autograd"].backward = autograd_backward
        run.clobbered = _restore(snapshot) + run.clobbered
        torch.set_grad_enabled(grad_enabled)
        torch.set_default_dtype(default_dtype)
    return run


def _program_trace(error: BaseException, path: Path) -> str:
    """The traceback's frames in the program itself (runpy's, torch's and this file's left out)."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == str(path)]
    return "".join(["Traceback (most recent call last, the program's frames):\n", *traceback.format_list(frames),
                    *traceback.format_exception_only(error)])


def in_family(error: BaseException | None, code: str) -> bool:
    """Whether `error` is the RuntimeError PyTorch raises for rule `code`'s problem."""
    return isinstance(error, RuntimeError) and any(m in str(error) for m in family_messages().get(code, ()))


_REFERENCES: dict[Path, Run] = {}


def reference(path: Path) -> Run:
    """The original program run with its saved tensors cloned when saved (once per worker and case)."""
    if path not in _REFERENCES:
        _REFERENCES[path] = run_program(path, saved_tensors="clone-on-save")
    return _REFERENCES[path]


def assert_same_values(fixed: Run, meant: Run, context: str) -> None:
    assert len(fixed.losses) == len(meant.losses), \
        f"{len(fixed.losses)} backward() calls, the original made {len(meant.losses)}\n{context}"
    for i, (got, want) in enumerate(zip(fixed.losses, meant.losses)):
        torch.testing.assert_close(got, want, msg=lambda m: f"loss {i} of backward() differs: {m}\n{context}")
    assert fixed.grads.keys() == meant.grads.keys(), context
    for name, want in meant.grads.items():
        got = fixed.grads[name]
        assert (got is None) == (want is None), f"`{name}.grad` is {got} but the original gives {want}\n{context}"
        if want is not None:
            torch.testing.assert_close(got, want, msg=lambda m: f"`{name}.grad` differs: {m}\n{context}")


def _diff(path: Path, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"{path.name} (original)", f"{path.name} (fixed)"))


# --- the proofs ---------------------------------------------------------------------------------

@pytest.mark.usefixtures("corpus")  # label.py's MESSAGES tell a fix that leaves the error
@pytest.mark.parametrize("offered", [_param(o) for o in OFFERED])
def test_fix_is_proven_by_running_it(offered: OfferedFix, tmp_path):
    original = offered.path.read_text(encoding="utf-8")
    fixed_text = apply_edits(original, list(offered.fix.edits))
    assert fixed_text != original, f"{offered.fix.message}: the edits change nothing"
    fixed_path = tmp_path / offered.path.name  # the same name keeps tracebacks readable
    fixed_path.write_text(fixed_text, encoding="utf-8")
    context = f"fix: {offered.fix.message} ({offered.fix.applicability.value})\n{_diff(offered.path, original, fixed_text)}"

    compile(fixed_text, str(fixed_path), "exec")  # a fix never produces a syntax error
    before = [f.code for f in analyse_document(Document.parse(str(offered.path), original), Settings())]
    after = [f.code for f in analyse_document(Document.parse(str(fixed_path), fixed_text), Settings())]
    assert after.count(offered.finding.code) < before.count(offered.finding.code), \
        f"gradguard still reports {offered.finding.code} after its own fix\n{context}"

    fixed = run_program(fixed_path)
    assert not fixed.clobbered, f"the fixed program rebinds {', '.join(fixed.clobbered)}\n{context}"
    if in_family(fixed.error, offered.finding.code):
        pytest.fail(f"the fix leaves the {offered.finding.code} error:\n{fixed.trace}\n{context}")
    if fixed.error is not None:
        pytest.fail(f"the fixed program fails:\n{fixed.trace}\n{context}")
    if offered.value_checked:
        meant = reference(offered.path)
        if meant.error is not None:
            pytest.fail(f"the original fails even with its saved tensors cloned:\n{meant.trace}")
        assert meant.losses, "the original never calls backward()"
        assert_same_values(fixed, meant, context)


def gg001_cases() -> list[tuple[str, Path]]:
    return [(source, path) for source, path in marked_cases()
            if set(MARK.findall(path.read_text(encoding="utf-8"))) == {"GG001"}]


@pytest.mark.parametrize("source, path", [
    pytest.param(source, path, id=f"{source}/{path.stem}", marks=[pytest.mark.xfail(
        strict=True, reason=f"allow_mutation_on_saved_tensors misses it: {TORCH_MISSES[f'{source}/{path.stem}']}")]
        if f"{source}/{path.stem}" in TORCH_MISSES else [])
    for source, path in gg001_cases()
])
def test_reference_agrees_with_allow_mutation(source, path):
    """Cloning saved tensors when saved gives what allow_mutation_on_saved_tensors promises."""
    meant = reference(path)
    if meant.error is not None:
        pytest.fail(f"the original fails even with its saved tensors cloned:\n{meant.trace}")
    allowed = run_program(path, saved_tensors="allow-mutation")
    if allowed.error is not None:
        pytest.fail(f"the original fails under allow_mutation_on_saved_tensors:\n{allowed.trace}")
    assert_same_values(allowed, meant, f"{source}/{path.name}")


@pytest.mark.usefixtures("corpus")  # the floors count the corpus's fixes
def test_enough_fixes_are_proven():
    """Coverage must not shrink: the floors rise with what the analyzer offers."""
    proven = [o for o in OFFERED if o.key not in BROKEN_FIXES]
    checked = [o for o in proven if o.value_checked]
    summary = {code: sum(o.finding.code == code for o in proven) for code in ("GG001", "GG002", "GG003", "GG004")}
    assert len(proven) >= MIN_FIXES, f"only {len(proven)} fixes proven ({summary})"
    assert len(checked) >= MIN_VALUE_CHECKED, f"only {len(checked)} safe GG001 fixes value-checked"
    stale = set(BROKEN_FIXES) - {o.key for o in OFFERED}
    assert not stale, f"BROKEN_FIXES names fixes that are no longer offered: {sorted(stale)}"


# --- `gradguard check --fix` on whole folders ---------------------------------------------------

def _gradguard(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(GRADGUARD), *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.parametrize("source", [
    pytest.param(source, marks=[pytest.mark.xfail(strict=True, reason=f"analyzer bug: {FIX_RUN_GAPS[source]}")]
                 if source in FIX_RUN_GAPS else [])
    for source in sorted(SOURCES)
])
def test_check_fix_leaves_only_findings_without_a_safe_fix(source, tmp_path):
    if source == "corpus":
        shared_corpus()
    folder = tmp_path / "cases"
    shutil.copytree(SOURCES[source], folder)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "scratch"\n')
    originals = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.py")}

    proc = _gradguard("check", "--fix", "--no-config", folder, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr

    proc = _gradguard("check", "--format", "json", "--no-config", folder, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    remaining = json.loads(proc.stdout)
    with_safe_fix = [f"{Path(d['filename']).name}:{d['location']['row']}: {d['code']} ({d['fix']['message']})"
                     for d in remaining if d["fix"] is not None and d["fix"]["applicability"] == "safe"]
    assert not with_safe_fix, "`--fix` left findings that have a safe fix:\n" + "\n".join(with_safe_fix)

    still_reported = {Path(d["filename"]).name for d in remaining}
    changed = sorted(name for name, text in originals.items() if (folder / name).read_text(encoding="utf-8") != text)
    assert changed, "`--fix` changed no file"
    for name in sorted(originals):
        if not MARK.search(originals[name]):
            assert name not in changed, f"`--fix` changed {name}, which has no finding"
    failures = []
    for name in changed:
        if name in still_reported:
            continue
        run = run_program(folder / name)
        if run.error is not None:
            failures.append(f"{name}:\n{run.trace}{_diff(folder / name, originals[name], (folder / name).read_text())}")
    assert not failures, "fixed files that no longer have findings fail with torch:\n" + "\n".join(failures)
