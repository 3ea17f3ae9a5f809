"""The parent side of a verification: the child process, its limits, its events.

The user's code runs only in a child (`gradguard.verify.child`) in a session (and process group)
of its own, under a memory limit, with its stdout and stderr sent to `output` (our stderr).
Each file gets `timeout` seconds of wall time from the moment the child starts it; past that
the whole process group is killed and the remaining files go to a fresh child.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import IO

STARTUP = 60.0  # seconds a child may take to import torch before its first file


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


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _ended(process: subprocess.Popen) -> str:
    code = process.wait()
    if code < 0:
        return f"the run was killed by signal {signal.Signals(-code).name}"
    return f"the run ended unexpectedly (exit status {code})"


def run_files(entries: list[Entry], device: str = "auto", timeout: float = 120.0, memory: int = 8192,
              output: IO | int | None = None) -> list[FileRun]:
    """Run every entry in child processes; one `FileRun` per entry, in order."""
    results: dict[str, FileRun] = {}
    remaining = list(entries)
    while remaining:
        runs, remaining = _one_child(remaining, device, timeout, memory, sys.stderr if output is None else output)
        results.update((run.path, run) for run in runs)
    return [results[entry.path] for entry in entries]


def _one_child(entries: list[Entry], device: str, timeout: float, memory: int,
               output: IO | int) -> tuple[list[FileRun], list[Entry]]:
    """Run entries in one child until they are done or one stops it: (their runs, those left)."""
    read_end, write_end = os.pipe()
    request = {"device": device, "memory": memory, "files": [
        {"path": e.path, "target": e.target, "lines": list(e.lines), "settings": e.settings} for e in entries]}
    process = subprocess.Popen([sys.executable, "-m", "gradguard.verify.child", str(write_end)],
                               stdin=subprocess.PIPE, stdout=output, stderr=output, pass_fds=(write_end,),
                               start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    os.close(write_end)
    runs: list[FileRun] = []
    current: Entry | None = None
    deadline = time.monotonic() + STARTUP
    buffer = b""
    try:
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps(request).encode())
            process.stdin.close()
        except BrokenPipeError:  # the child died at once: its end of the events pipe says so
            pass
        while len(runs) < len(entries):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([read_end], [], [], max(left, 0))
            if not ready:
                _kill(process)
                if current is None:
                    return [FileRun(e.path, problem=f"the child did not start within {STARTUP:.0f} s")
                            for e in entries], []
                runs.append(FileRun(current.path, problem=f"the run took longer than {timeout:g} s and was "
                                    "stopped (its whole process group killed)"))
                return runs, entries[len(runs):]
            chunk = os.read(read_end, 1 << 16)
            if not chunk:  # the child is gone before finishing
                problem = _ended(process)
                if current is None:
                    return [FileRun(e.path, problem=problem) for e in entries], []
                runs.append(FileRun(current.path, problem=problem))
                return runs, entries[len(runs):]
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                event = json.loads(line)
                if event["event"] == "fatal":
                    _kill(process)
                    return runs + [FileRun(e.path, problem=event["message"]) for e in entries[len(runs):]], []
                if event["event"] == "start":
                    current = entries[len(runs)]
                    deadline = time.monotonic() + timeout
                elif event["event"] == "result":
                    runs.append(FileRun(event["path"], event.get("device"), tuple(event.get("findings", ())),
                                        frozenset(event.get("reached", ())), event.get("problem")))
                    current = None
        process.wait()
        return runs, []
    finally:
        os.close(read_end)
        if process.poll() is None:
            _kill(process)
