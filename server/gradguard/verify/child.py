"""The child process of a verification, started by `runner.py` under the project's interpreter.

It needs only the standard library and torch: `runner.py` loads gradguard's package by its path,
and the modules it imports here (`protocol`, `tree`, `sites`, `targets`, `tracer`, `compiled`,
`knowledge.ops`) import nothing else.

It reads the request (JSON) from stdin, limits its memory, then runs each file under the tracer
and writes one JSON line per event to the file descriptor `events_fd`: `start` (a file begins),
`result` (its findings, the lines it reached, or the problem that stopped it) and `fatal`
(nothing can run). The user's code writes to this process's stdout and stderr, which the parent
points at its own stderr.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

from gradguard.verify.protocol import (
    COMPILED,
    LEAF,
    OTHER_ERROR,
    VIEW,
    compiled_message,
    hazard_message,
    memory_limit_stop,
    raw_finding,
)
from gradguard.verify.tree import die_with_parent, reap_run

if TYPE_CHECKING:
    import torch

    from gradguard.verify.compiled import CompiledRun


def _limit_memory(mebibytes: int) -> None:
    limit = mebibytes << 20
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


def _reach_tracker(path: str, lines: set[int], reached: set[int]):  # noqa: ANN202 - a sys.settrace function
    """A trace function noting which of `lines` of `path` run; other files are not traced."""
    def local(frame, event, arg):  # noqa: ANN001, ANN202
        if event == "line" and frame.f_lineno in lines:
            reached.add(frame.f_lineno)
        return local

    def global_(frame, event, arg):  # noqa: ANN001, ANN202
        return local if frame.f_code.co_filename == path else None

    return global_


def _hazard_finding(hazard, device: str, compiled: CompiledRun | None) -> dict | None:  # noqa: ANN001 - a tracer.Hazard
    mutation, saved = hazard.mutation, hazard.saved
    if mutation.place is None:
        return None
    site = mutation.place.site().to_json()
    via = mutation.via if mutation.grad_enabled else ", ".join(filter(None, (mutation.via, "under no_grad")))
    silent = compiled is not None and hazard.of_compiled_save and compiled.silent
    kind = COMPILED if silent else hazard.kind
    message, related = hazard_message(kind, mutation.op, via, site, saved.op, saved.via, saved.role,
                                      saved.description, saved.place and saved.place.site().to_json(), device)
    if silent:
        call = saved.region.call
        message, more = compiled_message(message, site, call and call.site().to_json(), saved.region.backend,
                                         compiled.backend, compiled.eager_json(), device)
        related += more
    elif compiled is not None and hazard.of_compiled_save:
        message += " " + compiled.what_it_did(saved.region.backend, site)
    return raw_finding(kind, message, site, related, aten_op=saved.op if saved.op != "?" else None)


def _user_traceback(error: BaseException) -> str:
    """The traceback from the first line of the user's code on (ours and runpy's frames left out)."""
    from gradguard.verify.sites import is_user_file

    start = error.__traceback__
    while start is not None and not is_user_file(start.tb_frame.f_code.co_filename):
        start = start.tb_next
    if start is None and isinstance(error, SyntaxError):  # the user's code never ran: its error is all there is
        text = "".join(traceback.format_exception_only(type(error), error))
    else:
        text = "".join(traceback.format_exception(type(error), error, start or error.__traceback__))
    from gradguard.verify.targets import RUN_NOTEBOOKS

    for path, notebook in RUN_NOTEBOOKS.items():
        text = notebook.traceback_in_cells(text, path)
    return text


def _exception_finding(error: BaseException, device: str) -> dict:
    """GG002/GG003 when PyTorch raised its in-place error, GV001 for any other exception."""
    from gradguard.verify.sites import Site, traceback_site, user_frames

    site = traceback_site(error.__traceback__)
    frames = user_frames(error.__traceback__)
    if site is None and frames:
        site = frames[-1]
    if site is None and isinstance(error, SyntaxError) and error.filename and error.lineno:  # no frame of the file ran
        column = max((error.offset or 1) - 1, 0)
        site = Site(error.filename, error.lineno, column, column + 1)
    if site is None:
        site = Site("", 1, 0, 0)
    text = str(error).split("\n")[0]
    code = next((c for c, needles in ((LEAF, ("leaf Variable that requires grad",)),
                                      (VIEW, ("is a view and", "A view was created in no_grad mode",
                                              "A view was created in inference mode")))
                 if isinstance(error, RuntimeError) and any(n in text for n in needles)), None)
    if code is not None:
        return raw_finding(code, f"PyTorch raised at this line, running on {device}: {text}", site.to_json(), [])
    kind = type(error).__name__
    summary = f"{kind}: {text}" if text else kind
    related = [{"site": s.to_json(), "message": "called from here"} for s in frames[:-1] if s != site]
    return raw_finding(OTHER_ERROR, f"your code raised `{summary[:300]}` running on {device}; the run stopped here",
                       site.to_json(), related, _user_traceback(error))


def _past_memory_limit(error: BaseException) -> bool:
    """Whether `error` is an allocation refused by the run's `RLIMIT_DATA` (Python's, or torch's on the CPU)."""
    return isinstance(error, MemoryError) or (
        isinstance(error, RuntimeError) and "DefaultCPUAllocator: can't allocate memory" in str(error))


def _runner(entry: dict, device: torch.device) -> Callable[[], None]:
    """What runs the file (or its target) on `device`, once."""
    import torch

    from gradguard.verify.targets import run_script, run_target

    def run() -> None:
        if device.type != "cpu":
            torch.set_default_device(device)
        try:
            if entry.get("target"):
                run_target(entry["path"], entry["target"], entry.get("settings", {}), device)
            else:
                run_script(entry["path"])
        finally:
            torch.set_default_device(None)

    return run


def verify_file(entry: dict, device_name: str, memory: int, timeout: float = 120.0) -> dict:
    """Run one file (or target) under the tracer, within `memory` MiB: its findings and the wanted
    lines it reached, or the problem that stopped it. When code outside a compiled region changed
    what the region saved, the file runs twice more, eager and compiled, to tell what compiling does."""
    import torch

    from gradguard.verify.compiled import drop_user_modules, run_compiled, stand_ins
    from gradguard.verify.targets import TargetError
    from gradguard.verify.tracer import Tracer

    started = time.monotonic()
    path, lines, reached = entry["path"], set(entry.get("lines", ())), set()
    run = _runner(entry, torch.device(device_name))
    findings: list[dict] = []
    problem: str | None = None
    previous_path, modules = list(sys.path), set(sys.modules)
    torch.set_grad_enabled(True)
    tracer = Tracer()
    compiled: CompiledRun | None = None
    with stand_ins():
        if lines:
            sys.settrace(_reach_tracker(path, lines, reached))
        try:
            with tracer:
                run()
        except TargetError as error:  # what ran before (the file's own top level) still counts
            problem = str(error)
        except SystemExit as error:
            if error.code not in (None, 0):
                findings.append(_exception_finding(error, device_name))
        except Exception as error:  # past the memory limit: a stop, as past the time limit; else a finding, with its traceback
            if _past_memory_limit(error):
                problem = memory_limit_stop(memory, "tried to allocate more than",
                                            "RLIMIT_DATA, which fails such an allocation at once")
            else:
                sys.stderr.write(_user_traceback(error))
                findings.append(_exception_finding(error, device_name))
        finally:
            sys.settrace(None)
            sys.path[:] = previous_path
        if problem is None and any(h.of_compiled_save for h in tracer.hazards):
            drop_user_modules(modules)
            compiled = run_compiled(run, started, timeout)
    hazards = [_hazard_finding(h, device_name, compiled) for h in tracer.hazards]
    findings = [f for f in hazards if f is not None] + findings
    return {"path": path, "device": device_name, "findings": findings, "reached": sorted(reached), "problem": problem,
            "inductor_replaced": compiled and compiled.instead}


def choose_device(asked: str) -> str:
    """`auto`: CUDA when torch sees a GPU, else the CPU. Raises RuntimeError for missing CUDA."""
    import torch

    if asked == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if asked == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda: torch sees no CUDA device here")
    return asked


def main(events_fd: int) -> int:
    reap_run(events_fd)  # this process reaps the run; its child, which returns, runs it
    die_with_parent()  # the reaper killed or gone: so is the run
    if os.getppid() == 1:
        return 0  # it died before that took effect
    events: IO[str] = os.fdopen(events_fd, "w", buffering=1)
    request = json.load(sys.stdin)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    _limit_memory(request["memory"])

    def emit(event: dict) -> None:
        events.write(json.dumps(event) + "\n")

    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")  # torch's, about our own imports
    try:
        import torch
    except ImportError as error:  # missing, or installed but broken (a library it needs)
        missing = isinstance(error, ModuleNotFoundError) and error.name == "torch"
        emit({"event": "fatal", "kind": "torch" if missing else "broken-torch", "error": f"{type(error).__name__}: {error}"})
        return 0
    try:
        from gradguard.verify.sites import record_constructions
        device = choose_device(request["device"])
    except (ImportError, RuntimeError) as error:
        emit({"event": "fatal", "message": f"{type(error).__name__}: {error}" if isinstance(error, ImportError)
              else str(error)})
        return 0
    record_constructions()
    emit({"event": "torch", "version": torch.__version__})
    for entry in request["files"]:
        emit({"event": "start", "path": entry["path"]})
        emit({"event": "result", **verify_file(entry, device, request["memory"], request.get("timeout", 120.0))})
    return 0

