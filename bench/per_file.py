"""Per-file budget benchmark: every file of the model libraries, analysed cold, one at a time.

    .venv/bin/python bench/per_file.py [TREE ...] [--jobs N] [--limit SECONDS] [--every N] [--times FILE] [--no-append]
    .venv/bin/python bench/per_file.py --again FILE [--slowest N]

Each file is analysed as `gradguard check FILE --no-cache` analyses it (`cli.scan.analyse_files`,
its collector paused): a fresh project index (so the files it imports are
parsed and read again, jedi included), its own CPU time (user + sys of the process,
`time.process_time`) from reading the text to the findings. Target: every file
within `--limit` (2 s). The slowest ten files, the information notes of cut analyses, and any
error-level finding go to stdout and to bench/results.md. Default trees: the four libraries
`make models` unpacks (transformers: its models/ subtree). `--again FILE` measures again the
`--slowest` files of an earlier run's `--times` file (a quiet check of the tail of a long run).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "third_party" / "models" / "src"
DEFAULT_TREES = [SOURCES / "torchvision", SOURCES / "timm", SOURCES / "torch_geometric",
                 SOURCES / "transformers" / "models"]
RESULTS = ROOT / "bench" / "results.md"


def shown(path: str) -> str:
    return os.path.relpath(path, SOURCES)


def measure(paths: list[str]) -> list[tuple[str, float, list[tuple[str, str, int, str]]]]:
    """(path, CPU seconds, [(code, severity, line, message)]) of each file, each analysed cold."""
    from gradguard.cli.scan import analyse_files
    from gradguard.config import Settings

    settings = Settings()
    measured = []
    for path in paths:
        gc.unfreeze()  # what the previous file's run froze, and its garbage, are not this file's
        gc.collect()
        start = time.process_time()
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        [result] = analyse_files([(Path(path), text, settings)])
        if result.failure is not None:
            raise RuntimeError(result.failure)
        measured.append((path, time.process_time() - start,
                         [(f.code, f.severity.value, f.span.start.line, f.message) for f in result.findings]))
    return measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path, default=DEFAULT_TREES)
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes (more than one shares the cores and inflates each file's CPU time)")
    parser.add_argument("--limit", type=float, default=2.0, help="CPU seconds every file must stay within")
    parser.add_argument("--no-append", action="store_true", help="do not append the table to bench/results.md")
    parser.add_argument("--every", type=int, default=1, help="only every N-th file (a quick estimate)")
    parser.add_argument("--times", type=Path, help="write every file's CPU seconds to this JSON file")
    parser.add_argument("--again", type=Path, help="measure again the slowest files of this --times file")
    parser.add_argument("--slowest", type=int, default=50, help="with --again: how many of its slowest files")
    args = parser.parse_args()
    if args.again is not None:
        earlier = json.loads(args.again.read_text())
        files = sorted(str(SOURCES / p) for p in sorted(earlier, key=earlier.get, reverse=True)[:args.slowest])
    else:
        files = sorted(str(p) for tree in args.trees for p in tree.rglob("*.py"))[::args.every]
    chunks = [files[i::args.jobs * 8] for i in range(args.jobs * 8)]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = [r for chunk in pool.map(measure, chunks) for r in chunk]
    wall = time.perf_counter() - started
    times = sorted((seconds, path) for path, seconds, _ in results)
    if args.times is not None:
        args.times.write_text(json.dumps({shown(p): round(s, 3) for s, p in times}, indent=1))
    over = [(s, p) for s, p in times if s > args.limit]
    notes = [(p, line, message) for p, _, findings in results for code, severity, line, message in findings
             if code == "GG000" and severity == "info"]
    errors = [(p, line, code, message) for p, _, findings in results for code, severity, line, message in findings
              if severity == "error"]
    lines = [
        f"# Per-file budget benchmark, {datetime.datetime.now().isoformat(timespec='seconds')}", "",
        (f"The {len(files)} slowest files of an earlier run (`{args.again.name}`)" if args.again is not None else
         f"Trees: {', '.join(f'`{os.path.relpath(t, ROOT)}`' for t in args.trees)} ({len(files)} files)") + "; each file "
        f"analysed cold (a fresh project index: its imports parsed and read again), {args.jobs} processes, "
        f"{wall:.0f} s wall.  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())} at the end.", "",
        f"CPU s per file: p50 {statistics.median(s for s, _ in times):.2f}, "
        f"p95 {times[int(len(times) * 0.95)][0]:.2f}, max {times[-1][0]:.2f}; "
        f"over {args.limit:g} s: {len(over)}. Slowest ten:", "",
        "| file | CPU s |", "|---|---:|",
        *(f"| `{shown(p)}` | {s:.2f} |" for s, p in reversed(times[-10:])), "",
        f"Information notes (cut analyses, unread imports): {len(notes)} in "
        f"{len({p for p, _, _ in notes})} files; error-level findings: {len(errors)}.", "",
        *(f"- `{shown(p)}:{line}` {code}: {message[:160]}" for p, line, code, message in errors[:20]),
        "", "| target | measured | result |", "|---|---|---|",
        f"| every file <= {args.limit:g} CPU s, cold | max {times[-1][0]:.2f} s ({len(over)} over) | "
        f"{'PASS' if not over else 'FAIL'} |", "",
    ]
    report = "\n".join(lines)
    print(report)
    if not args.no_append:
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write("\n" + report)
    return 0 if not over else 1


if __name__ == "__main__":
    sys.exit(main())
