"""The library cache, cold and warm: gradguard on a project that imports timm (and torchvision,
transformers), with an empty user cache directory, then again with the one the first run filled.

    .venv/bin/python bench/library_cache.py [--project PATH] [--runs N] [--no-append]

Each run is `gradguard check --no-cache --no-config --jobs 1 PROJECT` in a fresh process with
`XDG_CACHE_HOME` pointing at a scratch folder (`--no-cache`: the per-file result cache is off, so
every file is analysed and every library file it follows is read: the warm run measures the
library cache alone). CPU time is the delta of `getrusage(RUSAGE_CHILDREN)`. "cold" empties the
folder before each run; "warm" keeps what the cold runs left (package indexes, library trees).
The table goes to stdout and is appended to bench/results.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRADGUARD = ROOT / ".venv" / "bin" / "gradguard"
DEFAULT_PROJECT = ROOT / "tests" / "libraries" / "timm"
RESULTS = ROOT / "bench" / "results.md"


def run(project: Path, cache: Path) -> tuple[float, float, str]:
    """(wall s, CPU s, the findings' summary line) of one check in a fresh process."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "HF_HUB_OFFLINE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([str(GRADGUARD), "check", "--no-cache", "--no-config", "--jobs", "1", "--statistics",
                           str(project)], capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1) or "internal error" in proc.stderr:
        raise SystemExit(f"gradguard failed ({proc.returncode}): {proc.stderr[-2000:]}")
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    return wall, cpu, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, default=DEFAULT_PROJECT)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-append", action="store_true", help="print only; leave bench/results.md alone")
    args = parser.parse_args()
    project = args.project.resolve()
    files = sorted(project.rglob("*.py"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="gradguard-library-cache-") as scratch:
        cache = Path(scratch) / "cache"
        cold, warm = [], []
        for _ in range(args.runs):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(run(project, cache))
        entries = sum(1 for p in cache.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file())
        for _ in range(args.runs):
            warm.append(run(project, cache))
    for name, results in (("cold (empty cache)", cold), ("warm (cache filled)", warm)):
        walls, cpus = [r[0] for r in results], [r[1] for r in results]
        rows.append(f"| {name} | {statistics.median(walls):.2f} | {statistics.median(cpus):.2f} | "
                    f"{min(cpus):.2f} | {results[-1][2]} |")
    table = "\n".join([
        f"### Library cache, cold and warm ({datetime.date.today()}, `bench/library_cache.py`)",
        "",
        f"Project: `{project.relative_to(ROOT) if project.is_relative_to(ROOT) else project}` ({len(files)} files "
        f"importing timm); {args.runs} runs each, `gradguard check --no-cache --jobs 1`; machine: "
        f"{platform.machine()}, {os.cpu_count()} cores (shared). The warm cache held {entries} files, "
        f"{size / 1e6:.1f} MB.",
        "",
        "| run | wall s (median) | CPU s (median) | CPU s (min) | output |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ])
    print(table)
    if not args.no_append:
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write("\n" + table)


if __name__ == "__main__":
    main()
