"""The parent side of a verification: the child process, its limits, its events.

The user's code runs only in a child (`gradguard.verify.child`), forked by the run's reaper (the
process started here, in a session of its own: `tree.reap_run`), with its stdout and stderr sent
to `output` (our stderr). Its limits:
- time: each file gets `timeout` seconds of wall time from the moment the child starts it;
- memory: `RLIMIT_DATA` per process (set by the child), and the whole tree's memory, which the
  parent measures every `POLL` seconds (`tree.py`);
- its end: when the child finishes, stops or is stopped, every process it started is killed
  (every descendant of the reaper, which reaps the run's orphans), so none outlives the run or
  holds its pipes; the reaper kills the run when gradguard dies (`PR_SET_PDEATHSIG`), and
  `stop_all()` ends every run under way (a signal to gradguard, an editor that disconnects).
Past a limit the run's tree is killed and the remaining files go to a fresh child.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from gradguard.project_python import Interpreter
from gradguard.verify.protocol import memory_limit_stop
from gradguard.verify.tree import TOKEN, ProcessTree, become_subreaper

STARTUP = 60.0  # seconds a child may take to import torch before its first file
POLL = 0.2  # seconds between two measures of the run's memory
REAPED = 10.0  # seconds the run's reaper may take to exit once what the run left is killed
MEMORY_MECHANISM = ("RLIMIT_DATA per process, and the process tree's proportional set size, "
                    f"measured every {POLL:g} s")
PACKAGE = str(Path(__file__).resolve().parent.parent)  # gradguard's package folder, as the child imports it
# The child runs under the project's interpreter, where gradguard need not be installed: this package is
# loaded from its folder by path, and nothing else of gradguard's environment becomes importable (its
# modules that the child imports need only the standard library and torch). `python -m` would also
# import a `gradguard/` of the working folder (the user's project): `-c` puts that folder first, as ''.
_CHILD = """import os, sys
sys.path[:] = [p for p in sys.path if p]
if sys.version_info < (3, 10):
    os.write(int(sys.argv[2]), ('{"event": "fatal", "kind": "python", "version": "%d.%d"}\\n' % sys.version_info[:2]).encode())
    sys.exit(0)
import importlib.util
spec = importlib.util.spec_from_file_location("gradguard", os.path.join(sys.argv[1], "__init__.py"),
                                              submodule_search_locations=[sys.argv[1]])
package = importlib.util.module_from_spec(spec)
sys.modules["gradguard"] = package
spec.loader.exec_module(package)
from gradguard.verify.child import main
sys.exit(main(int(sys.argv[2])))
"""
_warned = False  # `_warn_about_torch` said it
_live: set[ProcessTree] = set()  # the runs under way, for `stop_all`
_live_lock = threading.Lock()


@dataclass(frozen=True)
class Entry:
    """One file to verify: run as a script (no `target`) or one class/function of it."""

    path: str
    target: str | None = None
    lines: tuple[int, ...] = ()  # static findings' lines: the child says which of them ran
    settings: dict = field(default_factory=dict, hash=False)  # the target's [tool.gradguard.verify.targets]


@dataclass(frozen=True)
class FileRun:
    """What running one file gave: raw runtime findings and reached lines, or why it could not run."""

    path: str
    device: str | None = None
    findings: tuple[dict, ...] = ()
    reached: frozenset[int] = frozenset()
    problem: str | None = None  # the run could not be done or did not finish
    inductor_replaced: str | None = None  # why the compiled run used aot_eager instead of inductor (None: it did not)


def _warn_about_torch(version: str) -> None:
    """One line, once a run, when the child's torch is not the one the op table was generated from."""
    global _warned
    from gradguard.knowledge.ops import torch_version

    table = torch_version()
    if not _warned and version.split("+")[0].split(".")[:2] != table.split("+")[0].split(".")[:2]:
        _warned = True
        print(f"gradguard: torch {version} runs the code, but gradguard's knowledge of what each op saves was "
              f"generated from torch {table}: the static findings may differ from what this torch does",
              file=sys.stderr)


def stop_all() -> None:
    """Kill every run under way (their waiting callers see them end)."""
    with _live_lock:
        trees = list(_live)
    for tree in trees:
        tree.kill()
        _kill_group(tree.root)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _ended(process: subprocess.Popen) -> str:
    """How the run's child ended, as its reaper (`process`) says once what the child left is killed."""
    try:
        code = process.wait(timeout=REAPED)
    except subprocess.TimeoutExpired:
        return "the run ended unexpectedly"
    if code < 0:
        return f"the run was killed by signal {signal.Signals(-code).name}"
    return f"the run ended unexpectedly (exit status {code})"


def run_files(entries: list[Entry], interpreter: Interpreter, device: str = "auto", timeout: float = 120.0,
              memory: int = 8192, output: IO | int | None = None) -> list[FileRun]:
    """Run every entry in child processes under `interpreter`; one `FileRun` per entry, in order."""
    results: dict[str, FileRun] = {}
    become_subreaper()
    remaining = list(entries)
    while remaining:
        runs, remaining = _one_child(remaining, interpreter, device, timeout, memory,
                                     sys.stderr if output is None else output)
        results.update((run.path, run) for run in runs)
    return [results[entry.path] for entry in entries]


def _one_child(entries: list[Entry], interpreter: Interpreter, device: str, timeout: float, memory: int,
               output: IO | int) -> tuple[list[FileRun], list[Entry]]:
    """Run entries in one child until they are done or one stops it: (their runs, those left)."""
    read_end, write_end = os.pipe()
    request = {"device": device, "memory": memory, "timeout": timeout, "files": [
        {"path": e.path, "target": e.target, "lines": list(e.lines), "settings": e.settings} for e in entries]}
    token = secrets.token_hex(8)
    try:
        process = subprocess.Popen([interpreter.executable, "-c", _CHILD, PACKAGE, str(write_end)],
                                   stdin=subprocess.PIPE, stdout=output, stderr=output, pass_fds=(write_end,),
                                   start_new_session=True,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1", TOKEN: token})
    except OSError as error:
        os.close(read_end)
        problem = f"the interpreter {interpreter.describe()} could not be started: {error.strerror or error}"
        return [FileRun(e.path, problem=problem) for e in entries], []
    finally:
        os.close(write_end)
    tree = ProcessTree(process.pid, token)
    with _live_lock:
        _live.add(tree)
    try:
        return _follow(process, tree, read_end, entries, interpreter, timeout, memory, json.dumps(request).encode())
    finally:
        os.close(read_end)
        tree.kill()  # what the run started and left behind, too
        _kill_group(process.pid)
        process.wait()
        with _live_lock:
            _live.discard(tree)


def _fatal(event: dict, interpreter: Interpreter) -> str:
    """Why the child could not run anything, as the user reads it."""
    if event.get("kind") == "torch":
        return (f"torch is not installed in {interpreter.describe()}; install it there, or name the "
                "project's interpreter with --python (the editor: gradguard.interpreter)")
    if event.get("kind") == "broken-torch":
        return f"torch cannot be imported in {interpreter.describe()}: {event['error']}"
    if event.get("kind") == "python":
        return f"{interpreter.describe()} is Python {event['version']}; verify needs Python 3.10 or newer"
    return event["message"]


def _follow(process: subprocess.Popen, tree: ProcessTree, read_end: int, entries: list[Entry],
            interpreter: Interpreter, timeout: float, memory: int, request: bytes) -> tuple[list[FileRun], list[Entry]]:
    """Read the child's events until its entries are done or a limit stops it."""
    runs: list[FileRun] = []
    current: Entry | None = None
    deadline = time.monotonic() + STARTUP
    buffer = b""
    assert process.stdin is not None
    try:
        process.stdin.write(request)
        process.stdin.close()
    except BrokenPipeError:  # the child died at once: its end of the events pipe says so
        pass

    def stopped(problem: str) -> tuple[list[FileRun], list[Entry]]:
        tree.kill()
        if current is None:
            return runs + [FileRun(e.path, problem=problem) for e in entries[len(runs):]], []
        return runs + [FileRun(current.path, problem=problem)], entries[len(runs) + 1:]

    measured = time.monotonic()
    while len(runs) < len(entries):
        left = deadline - time.monotonic()
        ready, _, _ = select.select([read_end], [], [], min(max(left, 0), POLL))
        if time.monotonic() - measured >= POLL:
            measured = time.monotonic()
            if tree.resident_bytes() > memory << 20:
                return stopped(memory_limit_stop(memory, "used more than", MEMORY_MECHANISM))
        if not ready:
            if time.monotonic() < deadline:
                continue
            if current is None:
                return stopped(f"the child did not start within {STARTUP:.0f} s")
            return stopped(f"the run took longer than {timeout:g} s and was stopped (every process it started killed)")
        chunk = os.read(read_end, 1 << 16)
        if not chunk:  # the child is gone before finishing: once what it left is killed, its reaper says how
            tree.kill()
            return stopped(_ended(process))
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            event = json.loads(line)
            if event["event"] == "fatal":
                current = None
                return stopped(_fatal(event, interpreter))
            if event["event"] == "torch":
                _warn_about_torch(event["version"])
            elif event["event"] == "start":
                current = entries[len(runs)]
                deadline = time.monotonic() + timeout
            elif event["event"] == "result":
                runs.append(FileRun(event["path"], event.get("device"), tuple(event.get("findings", ())),
                                    frozenset(event.get("reached", ())), event.get("problem"),
                                    event.get("inductor_replaced")))
                current = None
    return runs, []  # the child ends now; what it left running is killed
