"""Scan benchmark: gradguard's CPU time on a tree, next to libcst's parse and TorchFix, in one run.

    .venv/bin/python bench/scan.py [--tree PATH] [--skip-torchfix]

Each measurement runs as a subprocess; its CPU time (user + sys, worker processes included) is the
delta of `getrusage(RUSAGE_CHILDREN)` around it. Targets: a cold `gradguard check --no-cache` takes
at most 2.5x the CPU time of parsing every file with libcst, and a warm re-scan of the unchanged
tree takes under 2 s wall. The table goes to stdout and to bench/results.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
GRADGUARD = ROOT / ".venv" / "bin" / "gradguard"
TORCHFIX = ROOT / "bench" / ".venv-torchfix" / "bin" / "torchfix"
WORKER = ROOT / "bench" / "worker.py"
DEFAULT_TREE = ROOT / "third_party" / "models" / "src" / "timm"
RESULTS = ROOT / "bench" / "results.md"

MAX_PARSE_RATIO = 2.5  # cold gradguard CPU / libcst parse CPU
MAX_WARM_WALL_S = 2.0


@dataclass
class Measurement:
    """One subprocess: its CPU and wall seconds, exit status and output."""

    label: str
    cpu_s: float
    wall_s: float
    returncode: int
    stdout: str
    stderr: str


def measure(label: str, command: list[str | Path]) -> Measurement:
    """Run `command` and charge it the CPU time of every process it (and its children) used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"  {label}: {cpu:.1f} CPU s, {wall:.1f} s wall (exit {done.returncode})", file=sys.stderr)
    return Measurement(label, cpu, wall, done.returncode, done.stdout, done.stderr)


def check_options() -> set[str]:
    """The long options `gradguard check` accepts (--no-cache and --cache-dir are recent)."""
    usage = subprocess.run([str(GRADGUARD), "check", "--help"], capture_output=True, text=True).stdout
    return {word.strip("[],") for word in usage.split() if word.startswith(("--", "[--"))}


def gradguard_runs(tree: Path) -> tuple[Measurement, list[Measurement], list[str]]:
    """The cold scan, then two scans with a fresh cache (the second one warm), and any caveats."""
    options = check_options()
    notes = []
    base: list[str | Path] = [GRADGUARD, "check", "--no-config", "--format", "json", "--exit-zero", tree]
    cold_flags = ["--no-cache"] if "--no-cache" in options else []
    if not cold_flags:
        notes.append("`gradguard check` has no --no-cache yet: the cold scan ran without it.")
    cold = measure("gradguard check --no-cache", base[:2] + cold_flags + base[2:])
    with tempfile.TemporaryDirectory(prefix="gradguard-bench-cache-") as cache:
        cache_flags = ["--cache-dir", cache] if "--cache-dir" in options else []
        if not cache_flags:
            notes.append("`gradguard check` has no --cache-dir yet: the cached runs used its default cache.")
        cached = [measure(f"gradguard check ({kind})", base[:2] + cache_flags + base[2:])
                  for kind in ("cache fill", "warm")]
    for run in [cold, *cached]:
        if run.returncode != 0:
            notes.append(f"{run.label} exited {run.returncode}: {run.stderr.strip()[-300:]}")
    findings = {len(json.loads(run.stdout or "[]")) for run in [cold, *cached] if run.returncode == 0}
    if len(findings) > 1:
        notes.append(f"the runs disagree on the number of findings: {sorted(findings)}")
    elif findings:
        count = findings.pop()
        notes.append(f"gradguard found {count} problem{'s' if count != 1 else ''}.")
    return cold, cached, notes


def percentile(values: list[float], fraction: float) -> float:
    """The `fraction` quantile of `values` (inclusive method)."""
    return statistics.quantiles(values, n=100, method="inclusive")[round(fraction * 100) - 1]


def report(tree: Path, rows: list[Measurement], parse_info: dict, per_file: dict[str, float],
           targets: list[tuple[str, str, bool | None]], notes: list[str], load: tuple[str, str]) -> str:
    """The results as Markdown."""
    parse_cpu = rows[0].cpu_s
    times = sorted(per_file.values())
    lines = [
        f"# Scan benchmark, {datetime.datetime.now().isoformat(timespec='seconds')}",
        "",
        f"Tree: `{tree.relative_to(ROOT) if tree.is_relative_to(ROOT) else tree}` "
        f"({parse_info['files']} files, {parse_info['lines']} lines; {len(times)} mention torch).  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average (1, 5, 15 min) {load[0]} at the start, {load[1]} at the end.",
        "",
        "| measurement | CPU s | wall s | CPU / parse CPU |",
        "|---|---:|---:|---:|",
        *(f"| {r.label} | {r.cpu_s:.1f} | {r.wall_s:.1f} | {r.cpu_s / parse_cpu:.2f}x |" for r in rows),
        "",
        f"The parse loop alone (files read beforehand, no interpreter start) took {parse_info['loop_cpu_s']:.1f} CPU s.",
        "",
        f"Per file (parse + analysis, serial, one project index, CPU ms): p50 {percentile(times, 0.5):.0f}, "
        f"p95 {percentile(times, 0.95):.0f}, max {times[-1]:.0f}; slowest:",
        "",
        *(f"- `{path}`: {ms:.0f} ms" for path, ms in sorted(per_file.items(), key=lambda i: -i[1])[:5]),
        "",
        "| target | measured | result |",
        "|---|---|---|",
        *(f"| {name} | {value} | {'info' if ok is None else 'PASS' if ok else 'FAIL'} |" for name, value, ok in targets),
    ]
    if notes:
        lines += ["", "Notes:", "", *(f"- {note}" for note in notes)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=DEFAULT_TREE, help="the source tree to scan (default: timm)")
    parser.add_argument("--skip-torchfix", action="store_true", help="do not run TorchFix")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where to write the Markdown report")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    if not tree.is_dir():
        parser.error(f"no such folder: {tree} (`make models` unpacks timm and torchvision)")
    if not args.skip_torchfix and not TORCHFIX.exists():
        parser.error(f"{TORCHFIX} is missing: run `make bench`, or pass --skip-torchfix")
    load_start = "%.2f, %.2f, %.2f" % os.getloadavg()

    parse = measure("libcst parse", [PYTHON, WORKER, "parse", tree])
    walk = measure("libcst parse + empty visitor walk", [PYTHON, WORKER, "walk", tree])
    cold, (fill, warm), notes = gradguard_runs(tree)
    rows = [parse, walk, cold, fill, warm]
    torchfix = None
    if not args.skip_torchfix:
        torchfix = measure("TorchFix --select ALL", [TORCHFIX, "--select", "ALL", tree])
        rows.append(torchfix)
        if "Finished checking" not in torchfix.stderr + torchfix.stdout:
            notes.append(f"TorchFix did not finish cleanly (exit {torchfix.returncode}).")
    files = measure("per-file analysis (in-process, serial)", [PYTHON, WORKER, "files", tree])
    for run in (parse, walk, files):
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 2
    rows.append(files)
    parse_info = json.loads(parse.stdout)

    ratio = cold.cpu_s / parse.cpu_s
    targets: list[tuple[str, str, bool | None]] = [
        (f"cold scan CPU <= {MAX_PARSE_RATIO}x parse CPU", f"{ratio:.2f}x ({cold.cpu_s:.1f} / {parse.cpu_s:.1f} s)",
         ratio <= MAX_PARSE_RATIO),
        (f"warm re-scan wall < {MAX_WARM_WALL_S:.0f} s", f"{warm.wall_s:.2f} s", warm.wall_s < MAX_WARM_WALL_S),
    ]
    if torchfix is not None:
        targets.append(("TorchFix CPU / cold scan CPU (about 9x at the target)",
                        f"{torchfix.cpu_s / cold.cpu_s:.1f}x", None))
    load_end = "%.2f, %.2f, %.2f" % os.getloadavg()
    text = report(tree, rows, parse_info, json.loads(files.stdout)["ms"], targets, notes, (load_start, load_end))
    print(text)
    args.results.write_text(text, encoding="utf-8")
    return 0 if all(ok is not False for _, _, ok in targets) else 1


if __name__ == "__main__":
    sys.exit(main())
