"""Start-up of the `gradguard` command beside a bare interpreter and `ruff check`, in one run.

Each command runs `--rounds` times (wall time of the whole process, the median reported):
`python -c pass` (the floor), `gradguard --version`, `gradguard check --help`, `gradguard rule
GG001`, and `gradguard check FILE` on a small file answered from the result cache (a second run,
nothing changed), against `ruff --version` and `ruff check FILE` (its cache on). The goal: each
of gradguard's within 4x the bare interpreter.

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


def median_seconds(command: list[str], rounds: int, cwd: Path) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


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
            "gradguard --version": [str(GRADGUARD), "--version"],
            "gradguard check --help": [str(GRADGUARD), "check", "--help"],
            "gradguard rule GG001": [str(GRADGUARD), "rule", "GG001"],
            "gradguard check model.py (cache hit)": [str(GRADGUARD), "check", "model.py"],
        }
        if RUFF.exists():
            commands["ruff --version"] = [str(RUFF), "--version"]
            commands["ruff check model.py (cache hit)"] = [str(RUFF), "check", "--select", "F", "model.py"]
        for command in commands.values():  # warm the caches: results, .pyc files, the page cache
            subprocess.run(command, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        results = {name: median_seconds(command, args.rounds, work) for name, command in commands.items()}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    floor = results["python -c pass"]
    rows = [f"| {name} | {seconds * 1000:.0f} ms | {seconds / floor:.1f}x |" for name, seconds in results.items()]
    report = "\n".join([
        f"\n## Start-up, {datetime.date.today()} ({os.cpu_count()} cores, median of {args.rounds} runs; "
        "load beside it: see the note)\n",
        "| command | wall time | vs `python -c pass` |", "|---|---|---|", *rows, ""])
    print(report)
    if not args.no_append:
        with open(ROOT / "bench" / "results.md", "a", encoding="utf-8") as results_file:
            results_file.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
