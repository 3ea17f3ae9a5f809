"""Start-up of the `gradguard` command beside a bare interpreter and `ruff check`, in one run.

Each command runs `--rounds` times (wall time of the whole process, the median reported):
`python -c pass` (the floor), `gradguard --version`, `gradguard check --help`, `gradguard rule
GG001`, and `gradguard check FILE` on a small file answered from the result cache (a second run,
nothing changed), against `ruff --version` and `ruff check FILE` (its cache on). The goal: each
of gradguard's within 4x the bare interpreter.

The commands run with bytecode caching on, as on a user's machine (pip compiles an installed
wheel's modules): PYTHONDONTWRITEBYTECODE, which this workplace sets, is removed from their
environment, so that an editable install compiles its modules once, in the warm-up round, and not
in every measured one.

`python bench/startup.py [--rounds N] [--no-append]`; ruff comes from bench/.venv-ruff (`make
bench-lsp` makes it) and is skipped without it. Appends the figures to bench/results.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GRADGUARD = Path(sys.executable).with_name("gradguard")
RUFF = ROOT / "bench" / ".venv-ruff" / "bin" / "ruff"
CASE = ROOT / "tests" / "cases" / "relu_inplace_twice.py"


ENVIRONMENT = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def run_quietly(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run of `command`."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=ENVIRONMENT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = 0  # reaped by wait4
    return wall, usage.ru_utime + usage.ru_stime


def medians(commands: dict[str, list[str]], rounds: int, cwd: Path) -> dict[str, tuple[float, float]]:
    """Each command's median wall and CPU time; rounds interleave the commands, so that a change of
    load on the machine weighs on all of them alike."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            samples[name].append(run_quietly(command, cwd))
    return {name: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
            for name, runs in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--no-append", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gg-startup-"))
    try:
        shutil.copy(CASE, work / "model.py")
        (work / "pyproject.toml").write_text('[project]\nname = "bench"\n')
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python: the standard library a cache hit imports": [
                sys.executable, "-c", "import argparse, dataclasses, hashlib, json, pathlib, tomllib"],
            "gradguard --version": [str(GRADGUARD), "--version"],
            "gradguard check --help": [str(GRADGUARD), "check", "--help"],
            "gradguard rule GG001": [str(GRADGUARD), "rule", "GG001"],
            "gradguard check model.py (cache hit)": [str(GRADGUARD), "check", "model.py"],
        }
        if RUFF.exists():
            commands["ruff --version"] = [str(RUFF), "--version"]
            commands["ruff check model.py (cache hit)"] = [str(RUFF), "check", "--select", "F", "model.py"]
        for command in commands.values():  # warm the caches: results, .pyc files, the page cache
            run_quietly(command, work)
        results = medians(commands, args.rounds, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    wall_floor, cpu_floor = results["python -c pass"]
    rows = [f"| {name} | {wall * 1000:.0f} ms | {wall / wall_floor:.1f}x | {cpu * 1000:.0f} ms | {cpu / cpu_floor:.1f}x |"
            for name, (wall, cpu) in results.items()]
    report = "\n".join([
        f"\n## Start-up, {datetime.date.today()} ({os.cpu_count()} cores, median of {args.rounds} interleaved runs; "
        "load beside it: see the note)\n",
        "| command | wall time | vs `python -c pass` | CPU time | vs `python -c pass` |", "|---|---|---|---|---|",
        *rows, ""])
    print(report)
    if not args.no_append:
        with open(ROOT / "bench" / "results.md", "a", encoding="utf-8") as results_file:
            results_file.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
