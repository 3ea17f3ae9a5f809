"""Runs programs that use `torch.compile` one after another in this one process (a cold inductor
compile costs tens of seconds per process; in one, torch and the compiler load once).

`python run_compiled_programs.py [--eager] PROGRAM...` prints one JSON line per program:
{"path", "error"} (`Type: first line` of the exception it raised, or null when it ran to its end).
`--eager` runs them with `torch.compile` disabled (`torch._dynamo.config.disable`): what the same
code does in eager mode.
"""

from __future__ import annotations

import json
import runpy
import sys

import torch


def run(path: str) -> str | None:
    torch._dynamo.reset()
    try:
        runpy.run_path(path, run_name="__main__")
    except Exception as error:  # noqa: BLE001 - the program's fate is the result
        return f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}"
    return None


def main(argv: list[str]) -> None:
    eager = argv[:1] == ["--eager"]
    torch._dynamo.config.disable = eager
    for path in argv[1:] if eager else argv:
        print(json.dumps({"path": path, "error": run(path)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
