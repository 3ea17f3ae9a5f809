"""Runs programs each in a process of its own, forked from this one once it has imported torch and
run a few ops: each runs as `python PROGRAM` would run it (its own globals, torch's random state and
thread count as a new process has them), without paying torch's import and first ops (2 s) again
per program. The warm-up runs on one thread: no thread pool exists when the processes fork (forking
one hangs), and on a CUDA build it runs no backward pass (autograd's device threads do not survive
a fork).

`python run_programs.py PROGRAM...` prints one JSON line per program: {"path", "error"}, where
`error` is `Type: first line` of the exception it raised, `ExitStatus: N` when it exited with a
status other than 0, `Timeout` past `LIMIT_S` seconds (the process and those it started killed),
or null when it ran to its end.
"""

from __future__ import annotations

import atexit
import json
import os
import runpy
import signal
import sys
import time

import torch

LIMIT_S = int(os.environ.get("GRADGUARD_PROGRAM_LIMIT_S", "300"))
_FRESH_RNG = torch.random.get_rng_state()  # what a new process's default generator holds
_THREADS = torch.get_num_threads()
_REPORT_LIMIT = 4000  # bytes: well under a pipe's buffer, so that writing the fate never waits


def _warm_up() -> None:
    """The first ops' one-time costs (kernels found, an optimizer's and autograd's first use), paid here once."""
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                                torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 2))
    optimizer = torch.optim.Adam(model.parameters())
    loss = model(torch.randn(2, 3, 8, 8)).softmax(-1).log().sum()
    if torch.version.cuda is None:
        loss.backward()
        optimizer.step()


def _described(error: BaseException) -> str:
    try:
        message = str(error)
    except Exception:  # noqa: BLE001 - an exception whose message itself fails
        message = ""
    return f"{type(error).__name__}: {(message.strip().splitlines() or [''])[0]}"


def _child(path: str, report: int) -> None:
    """In the forked process: run `path` as a script, write its fate to `report`, exit as it would."""
    me = os.getpid()
    os.setpgid(0, 0)  # its own process group: a timeout kills what it started too
    torch.random.set_rng_state(_FRESH_RNG)
    torch.set_num_threads(_THREADS)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.argv = [path]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    fate, status = "", 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as error:
        status = error.code if isinstance(error.code, int) else (0 if error.code is None else 1)
    except BaseException as error:  # noqa: BLE001 - the program's fate is the result
        fate, status = _described(error), 1
    if os.getpid() != me:  # a process the program forked, back here: its parent reports
        os._exit(status)
    try:
        atexit._run_exitfuncs()  # the program's own (and multiprocessing's: its daemonic workers stopped)
    except BaseException:  # noqa: BLE001 - as at an interpreter's exit: reported, then ignored
        pass
    os.write(report, fate.encode("utf-8", "replace")[:_REPORT_LIMIT])
    os._exit(status)


def fate_of(path: str) -> str | None:
    """What running `path` in a forked process gave (see the module's docstring)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            _child(path, write)
        finally:
            os._exit(70)
    os.close(write)
    deadline = time.monotonic() + LIMIT_S
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            os.close(read)
            return "Timeout"
        time.sleep(0.005)
    status = done[1]
    os.set_blocking(read, False)
    try:
        text = os.read(read, _REPORT_LIMIT + 1).decode("utf-8", "replace")
    except BlockingIOError:  # a process the program started still holds the pipe, and wrote nothing
        text = ""
    os.close(read)
    if os.WIFSIGNALED(status):
        return f"Signal: {os.WTERMSIG(status)}"
    if text:
        return text
    code = os.WEXITSTATUS(status)
    return f"ExitStatus: {code}" if code else None


def main(paths: list[str]) -> None:
    _warm_up()
    for path in paths:
        print(json.dumps({"path": path, "error": fate_of(path)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
