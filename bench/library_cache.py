"""The library cache, cold and warm: gradguard on a project that imports timm (and torchvision,
transformers), with an empty user cache directory, then again with the one the first run filled.

    .venv/bin/python bench/library_cache.py [--project PATH] [--runs N] [--no-append]

Each run is `gradguard check --no-cache --no-config --jobs 1 PROJECT` in a fresh process with
`XDG_CACHE_HOME` pointing at a scratch folder (`--no-cache`: the per-file result cache is off, so
every file is analysed and every library file it follows is read: the warm run measures the
library cache alone). CPU time is the delta of `getrusage(RUSAGE_CHILDREN)`. "cold" empties the
folder before each run; "warm" keeps what the cold runs left (package indexes, library trees).
Then the language server on one program of the project (`--lsp-file`), cold and warm: the time to
its first diagnostics (which do not wait for the library), to the diagnostics once the library's
files are read in the background (its GG001 through timm's `Mlp`), and the latency of keystrokes
typed after that (a comment typed at the end of a line, then deleted: each waits for the
diagnostics of its version), beside `ruff server` (bench/.venv-ruff) typing the same.
The tables go to stdout and are appended to bench/results.md.
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
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_latency import RUFF, Client, percentile  # noqa: E402  (the LSP client of `make bench-lsp`)

ROOT = Path(__file__).resolve().parent.parent
GRADGUARD = ROOT / ".venv" / "bin" / "gradguard"
DEFAULT_PROJECT = ROOT / "tests" / "libraries" / "timm"
DEFAULT_LSP_FILE = DEFAULT_PROJECT / "mlp_token_residual_iadd.py"
TYPED = "  # widen"  # typed at the end of the program's marked line, one character at a time, then deleted
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


def lsp_session(command: list[str], path: Path, cache: Path | None) -> dict:
    """One server: first diagnostics, settled diagnostics (gradguard only), keystroke latencies (ms)."""
    if cache is not None:
        os.environ["XDG_CACHE_HOME"] = str(cache)
    client = Client(command)
    result: dict = {}
    try:
        client.initialize()
        text = path.read_text(encoding="utf-8")
        uri = path.as_uri()
        sent = client.open(path, text)
        arrived = client.wait_version(uri, 1, sent)
        result["first"] = (arrived - sent) * 1000 if arrived else None
        if cache is not None:
            settled = client.wait(lambda: any(d.get("code") == "GG001" for d in client.last_publish.get(uri, (0, []))[1]),
                                  "the diagnostics with the library read")
            result["settled"] = (client.last_publish[uri][0] - sent) * 1000 if settled else None
        row = next(i for i, line in enumerate(text.splitlines()) if "expect:" in line)
        column = len(text.splitlines()[row])
        latencies, version = [], 1
        edits = [(column + i, column + i, ch) for i, ch in enumerate(TYPED)]
        edits += [(column + i - 1, column + i, "") for i in range(len(TYPED), 0, -1)]
        for start, end, new in edits:
            version += 1
            sent = client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": row, "character": start},
                                              "end": {"line": row, "character": end}}, "text": new}]})
            arrived = client.wait_version(uri, version, sent)
            if arrived is not None:
                latencies.append((arrived - sent) * 1000)
        result["p50"] = statistics.median(latencies) if latencies else None
        result["p95"] = percentile(latencies, 0.95) if latencies else None
        result["keystrokes"] = len(edits)
    finally:
        client.stop()
    return result


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, default=DEFAULT_PROJECT)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-append", action="store_true", help="print only; leave bench/results.md alone")
    parser.add_argument("--lsp-file", type=Path, default=DEFAULT_LSP_FILE)
    parser.add_argument("--skip-ruff", action="store_true")
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
        lsp_file = args.lsp_file.resolve()
        server = [str(GRADGUARD), "lsp"]
        lsp_cold = lsp_session(server, lsp_file, Path(scratch) / "lsp-cold")
        lsp_warm = lsp_session(server, lsp_file, cache)
        ruff = lsp_session([str(RUFF), "server"], lsp_file, None) if not args.skip_ruff and RUFF.exists() else None
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
        f"Language server on `{lsp_file.relative_to(ROOT) if lsp_file.is_relative_to(ROOT) else lsp_file}`: "
        f"didOpen to its first diagnostics, to the diagnostics with timm's files read (background jobs), "
        f"then {lsp_warm['keystrokes']} keystrokes at the end of its marked line (ms):",
        "",
        "| server | first diagnostics | library read | keystroke p50 | keystroke p95 |",
        "|---|---|---|---|---|",
        *(f"| {name} | {fmt(r['first'])} | {fmt(r.get('settled'))} | {fmt(r['p50'])} | {fmt(r['p95'])} |"
          for name, r in (("gradguard, cache cold", lsp_cold), ("gradguard, cache warm", lsp_warm),
                          ("ruff server", ruff)) if r is not None),
        "",
    ])
    print(table)
    if not args.no_append:
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write("\n" + table)


if __name__ == "__main__":
    main()
