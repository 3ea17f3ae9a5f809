"""Code compiled by `torch.compile`, in the child: where it runs, and what it does when compiled.

While a file runs, `torch.compile` (a decorator, a function or module, `module.compile()`) and
`torch._dynamo.optimize` return stand-ins (`stand_ins`) whose behaviour `Pass` picks:
- `TRACE` runs the code eagerly, under the tracer, remembering that it runs inside a compiled
  region (`current_region`: the backend asked for, the user's line that called it), so that a save
  made inside a region and changed outside it is known;
- `EAGER` runs the code eagerly, as `torch.compile` disabled would;
- `COMPILED` runs it compiled for real (`torch.compile`, on the backend `compile_backend` chose).

`run_recorded` runs a file once without the tracer, recording how it ended and the gradients of
each backward pass: an eager and a compiled run compared tell whether the compiled program raises
where eager raises, or computes other gradients without an error (a silent mismatch).
"""

from __future__ import annotations

import functools
import random
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum

import torch

from gradguard import SAVED_TENSOR_ERROR
from gradguard.verify.sites import Place, Site, current_place, traceback_site, user_frames

DEFAULT_BACKEND = "inductor"
INDUCTOR_SECONDS = 60.0  # what a cold inductor compilation may take (about 25 s on 2 cores), with room to spare
CXX = ("c++", "g++", "clang++")


class Pass(Enum):
    TRACE = "trace"
    EAGER = "eager"
    COMPILED = "compiled"


@dataclass(frozen=True)
class Region:
    """A compiled region running: the backend the user asked for, and the user's line that called it."""

    backend: str
    call: Place | None


@dataclass
class _State:
    mode: Pass = Pass.TRACE
    backend: str = DEFAULT_BACKEND  # what a region asking for inductor is compiled with (`COMPILED`)
    entered: list[Region] = field(default_factory=list)


_state = _State()


def current_region() -> Region | None:
    """The compiled region the running code is in (innermost), None outside any."""
    return _state.entered[-1] if _state.entered else None


def _backend_name(backend: object) -> str:
    if backend is None:
        return DEFAULT_BACKEND
    return backend if isinstance(backend, str) else getattr(backend, "__name__", type(backend).__name__)


def _real_options(options: dict) -> dict:
    """`torch.compile`'s keywords for this pass: inductor's own (`mode`, `options`) dropped when
    inductor is replaced."""
    if _backend_name(options.get("backend")) != DEFAULT_BACKEND or _state.backend == DEFAULT_BACKEND:
        return options
    return {**{k: v for k, v in options.items() if k not in ("mode", "options")}, "backend": _state.backend}


class _Compiled:
    """What `torch.compile(fn_or_module, **options)` stands in for, once per pass."""

    def __init__(self, target: Callable, options: dict) -> None:
        self.target, self.options = target, options
        self.backend = _backend_name(options.get("backend"))
        self._compiled: dict[str, Callable] = {}

    def __call__(self, *args: object, **kwargs: object) -> object:
        if _state.mode is Pass.EAGER:
            return self.target(*args, **kwargs)
        if _state.mode is Pass.COMPILED:
            compiled = self._compiled.get(_state.backend)
            if compiled is None:
                with _real_compilers():
                    compiled = torch.compile(self.target, **_real_options(self.options))
                self._compiled[_state.backend] = compiled
            return compiled(*args, **kwargs)
        place, _ = current_place(1)
        _state.entered.append(Region(self.backend, place))
        try:
            return self.target(*args, **kwargs)
        finally:
            _state.entered.pop()


class _CompiledModule(torch.nn.Module):
    """`torch.compile(module)`'s stand-in: the module's parameters and attributes, run by `_Compiled`."""

    def __init__(self, module: torch.nn.Module, run: _Compiled) -> None:
        super().__init__()
        self._orig_mod = module
        self.__dict__["_run"] = run

    def forward(self, *args: object, **kwargs: object) -> object:
        return self.__dict__["_run"](*args, **kwargs)

    def __getattr__(self, name: str) -> object:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._orig_mod, name)


def _stand_in(target: Callable, options: dict) -> Callable:
    """What `torch.compile(target, **options)` gives while a file runs."""
    run = _Compiled(target, options)
    if isinstance(target, torch.nn.Module):
        return _CompiledModule(target, run)

    @functools.wraps(target)
    def compiled(*args: object, **kwargs: object) -> object:  # a function: bound as a method when one is decorated
        return run(*args, **kwargs)

    return compiled


_REAL = (torch.compile, torch._dynamo.optimize)


@contextmanager
def _real_compilers() -> Iterator[None]:
    """torch's own `torch.compile` and `torch._dynamo.optimize` (which it calls) while it compiles."""
    installed = torch.compile, torch._dynamo.optimize
    torch.compile, torch._dynamo.optimize = _REAL
    try:
        yield
    finally:
        torch.compile, torch._dynamo.optimize = installed


@contextmanager
def stand_ins() -> Iterator[None]:
    """`torch.compile` and `torch._dynamo.optimize` replaced by stand-ins while a file runs."""
    def compile(model: Callable | None = None, **options: object) -> Callable:  # noqa: A001 - torch's name
        if model is None:
            return lambda target: _stand_in(target, options)
        return _stand_in(model, options)

    def optimize(backend: object = DEFAULT_BACKEND, *, nopython: bool = False, **_: object) -> Callable:
        return lambda target: _stand_in(target, {"backend": backend, "fullgraph": nopython})

    torch.compile, torch._dynamo.optimize = compile, optimize
    _state.entered = []
    try:
        yield
    finally:
        torch.compile, torch._dynamo.optimize = _REAL


def compile_backend(left: float) -> tuple[str, str | None]:
    """The backend that runs what asks for inductor: inductor, or `aot_eager` and why not inductor."""
    if not any(shutil.which(name) for name in CXX):
        return "aot_eager", "no C++ compiler found, which inductor needs on the CPU"
    if left < INDUCTOR_SECONDS:
        return "aot_eager", (f"only {left:.0f} s of the run's time limit were left, too few for inductor's "
                             f"compilation; allow {INDUCTOR_SECONDS:.0f} s more with `timeout` in [tool.gradguard.verify]")
    return DEFAULT_BACKEND, None


@dataclass(frozen=True)
class Outcome:
    """How one run of a file ended: the exception it raised (with the user's line), and each
    backward pass's gradients, in order."""

    error: BaseException | None
    site: Site | None
    gradients: list[list[torch.Tensor | None]]

    def raised_saved_tensor_error(self) -> bool:
        return isinstance(self.error, RuntimeError) and "modified by an inplace operation" in str(self.error)

    def describe(self) -> str | None:
        """`RuntimeError: first line` of the exception (torch's whole message for the in-place error),
        None when the run ended without one."""
        if self.error is None:
            return None
        if self.raised_saved_tensor_error():
            return f"RuntimeError: {SAVED_TENSOR_ERROR}"
        text = (str(self.error).strip().splitlines() or [""])[0]
        return f"{type(self.error).__name__}: {text}" if text else type(self.error).__name__


def _leaves(tensors: object) -> list[torch.Tensor]:
    """The leaves a backward pass from `tensors` accumulates gradients into, in a stable order."""
    roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
    pending = [t.grad_fn for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    seen, leaves = set(), []
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor):
            leaves.append(variable)
        pending.extend(next_node for next_node, _ in node.next_functions)
    return leaves


@contextmanager
def _recording(gradients: list[list[torch.Tensor | None]]) -> Iterator[None]:
    """`torch.autograd.backward` (what `Tensor.backward` calls) recording its leaves' gradients."""
    real = torch.autograd.backward

    def backward(tensors: object, *args: object, **kwargs: object) -> None:
        leaves = _leaves(tensors)
        real(tensors, *args, **kwargs)
        gradients.append([None if leaf.grad is None else leaf.grad.detach().clone() for leaf in leaves])

    torch.autograd.backward = backward
    try:
        yield
    finally:
        torch.autograd.backward = real


def run_recorded(run: Callable[[], None], mode: Pass, backend: str = DEFAULT_BACKEND) -> Outcome:
    """Run a file once (`run`), its compiled regions run as `mode` says, seeded as every other pass."""
    gradients: list[list[torch.Tensor | None]] = []
    _state.mode, _state.backend = mode, backend
    torch._dynamo.reset()
    torch.manual_seed(0)
    random.seed(0)
    try:
        with _recording(gradients):
            run()
    except Exception as error:  # noqa: BLE001 - how the run ended is the result
        site = traceback_site(error.__traceback__) or next(iter(user_frames(error.__traceback__)[-1:]), None)
        return Outcome(error, site, gradients)
    finally:
        _state.mode = Pass.TRACE
    return Outcome(None, None, gradients)


def same_gradients(eager: Outcome, compiled: Outcome) -> bool:
    """Whether both runs computed the same gradients (to float32's noise)."""
    if len(eager.gradients) != len(compiled.gradients):
        return False
    for ours, theirs in zip(eager.gradients, compiled.gradients):
        if len(ours) != len(theirs):
            return False
        for a, b in zip(ours, theirs):
            if (a is None) != (b is None) or (a is not None and (a.shape != b.shape
                                                                  or not torch.allclose(a, b, rtol=1e-4, atol=1e-5))):
                return False
    return True


def seconds_left(started: float, timeout: float) -> float:
    return timeout - (time.monotonic() - started)


@dataclass(frozen=True)
class CompiledRun:
    """A file whose compiled regions' saves were changed outside them, run again eager and compiled."""

    backend: str
    instead: str | None  # why `backend` runs what asks for inductor (None: it is inductor, or not asked for)
    eager: Outcome
    compiled: Outcome

    @functools.cached_property
    def silent(self) -> bool:
        """Whether the compiled run raised nothing where eager raised, or computed other gradients."""
        return self.compiled.error is None and (self.eager.raised_saved_tensor_error()
                                                or not same_gradients(self.eager, self.compiled))

    def eager_json(self) -> dict:
        """How the eager run ended, as `protocol.compiled_message` reads it."""
        eager = self.eager
        return {"error": eager.describe(), "site": eager.site.to_json() if eager.site is not None else None}

    def what_it_did(self, asked: str, at: dict) -> str:
        """What the run compiled for `asked` did instead of computing from the changed value, as a sentence."""
        checked = ""
        if asked != DEFAULT_BACKEND:
            ran = f"compiled by {asked}"
        elif self.instead:
            ran = f"compiled by {self.backend} instead of inductor ({self.instead})"
            checked = f"; {self.backend} checks saved tensors as eager does: what inductor does was not checked"
        else:
            ran = f"compiled by {self.backend}"
        outcome = self.compiled
        if outcome.error is None:
            return f"Run {ran}, it ran to its end with eager's gradients{checked}."
        same_file = outcome.site is not None and outcome.site.filename == at["filename"]
        where = f" at line {outcome.site.line}" if same_file else ""
        return f"Run {ran}, it raised too{where}: `{(outcome.describe() or '')[:200]}`{checked}."


def run_compiled(run: Callable[[], None], started: float, timeout: float) -> CompiledRun:
    """The file run again without the tracer: eager, then compiled (inductor when it can be in time)."""
    backend, instead = compile_backend(seconds_left(started, timeout))
    eager = _fresh_run(run, Pass.EAGER, backend)
    return CompiledRun(backend, instead, eager, _fresh_run(run, Pass.COMPILED, backend))


def _fresh_run(run: Callable[[], None], mode: Pass, backend: str) -> Outcome:
    """One more run of the file, its path and imported modules as they were before the first."""
    path, argv, modules = list(sys.path), list(sys.argv), set(sys.modules)
    try:
        return run_recorded(run, mode, backend)
    finally:
        sys.path[:], sys.argv[:] = path, argv
        drop_user_modules(modules)


def drop_user_modules(before: set[str]) -> None:
    """Forget the modules a run imported from the user's files, so that the next run imports them afresh."""
    from gradguard.verify.sites import is_user_file

    for name in set(sys.modules) - before:
        path = getattr(sys.modules[name], "__file__", None)
        if path and is_user_file(path):
            del sys.modules[name]
