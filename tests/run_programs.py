"""Runs programs each in a process of its own, forked from this one once it has imported torch and
run a few ops: each runs as `python PROGRAM` would run it (its own globals, torch's random state as
a new process has it), without paying torch's import and first ops (2 s) again per program. The
ops run on one thread (no thread pool is started before the forks: forking one hangs).

`python run_programs.py PROGRAM...` prints one JSON line per program: {"path", "error"}, where
`error` is `Type: first line` of the exception it raised (null when it ran to its end), or
`Timeout` past `LIMIT_S` seconds.
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys

import torch

LIMIT_S = 300
_FRESH_RNG = torch.random.get_rng_state()  # what a new process's default generator holds


def _warm_up() -> None:
    """The first ops' one-time costs (kernels found, an optimizer's and autograd's first use), paid here once."""
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                                torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 2))
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(2, 3, 8, 8)).softmax(-1).log().sum().backward()
    optimizer.step()


def _child(path: str, report: int) -> None:
    """In the forked process: run `path` as a script, write its fate to `report`, exit."""
    signal.alarm(LIMIT_S)
    torch.random.set_rng_state(_FRESH_RNG)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.argv = [path]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    fate = ""
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as error:
        fate = "" if error.code in (None, 0) else f"SystemExit: {error.code}"
    except BaseException as error:  # noqa: BLE001 - the program's fate is the result
        fate = f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}"
    os.write(report, fate.encode("utf-8", "replace"))
    os._exit(0)


def fate_of(path: str) -> str | None:
    """What running `path` in a forked process gave (see the module's docstring)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            _child(path, write)
        finally:
            os._exit(1)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return "Timeout" if os.WTERMSIG(status) == signal.SIGALRM else f"Signal: {os.WTERMSIG(status)}"
    text = b"".join(chunks).decode("utf-8", "replace")
    return text or None


def main(paths: list[str]) -> None:
    _warm_up()
    for path in paths:
        print(json.dumps({"path": path, "error": fate_of(path)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
