"""`gradguard check [PATHS...]`: analyse files and print findings."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from gradguard import __version__
from gradguard.config import ConfigError, ProjectSettings, Settings, check_codes
from gradguard.engine import project_index
from gradguard.findings import Finding, Position, Severity, Span
from gradguard.cli.files import mentions_torch, python_files
from gradguard.cli.cache import Cache
from gradguard.cli.fixing import fix_file, unified_diff
from gradguard.cli.scan import scan
from gradguard.cli.output import RENDERERS


def _codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gradguard", description=__doc__)
    parser.add_argument("--version", action="version", version=f"gradguard {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("lsp", help="run the language server (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="serve over stdio (the default)")
    serve.add_argument("--tcp", action="store_true", help="serve over TCP")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=2087)
    serve.add_argument("--log-file", type=Path, help="also write the server's log to this file")
    serve.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    check = commands.add_parser("check", help="analyse files and folders")
    check.add_argument("paths", nargs="*", type=Path, default=[Path(".")])
    check.add_argument("--format", choices=sorted(RENDERERS), default="text")
    check.add_argument("--fix", action="store_true", help="apply safe fixes to the files")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff, apply unsafe fixes too")
    check.add_argument("--diff", action="store_true", help="print the fixes as a diff, change no file")
    check.add_argument("--no-cache", action="store_true", help="analyse every file, ignore the result cache")
    check.add_argument("--cache-dir", type=Path, default=Path(".gradguard_cache"),
                       help="where results are cached (default: .gradguard_cache)")
    check.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                       help="processes analysing files in parallel (default: all cores)")
    check.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to report")
    check.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to skip")
    check.add_argument("--no-config", action="store_true", help="ignore [tool.gradguard] in pyproject.toml")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when something is found")
    verify = commands.add_parser("verify", help="run files under the tracer (in a child process) and merge "
                                 "what it finds with the static findings")
    verify.add_argument("paths", nargs="+", type=Path, metavar="FILE")
    verify.add_argument("--target", help="a module class or function of the file to run (default: run it as a script)")
    verify.add_argument("--device", choices=["auto", "cpu", "cuda"], help="auto: CUDA when available, else the CPU")
    verify.add_argument("--timeout", type=float, help="seconds of wall time per file (default: 120)")
    verify.add_argument("--format", choices=["text", "json"], default="text")
    return parser


def unreadable(path: Path, error: Exception) -> Finding:
    return Finding("GG000", Severity.ERROR, f"gradguard could not read this file: {error}", str(path),
                   Span(Position(1, 0), Position(1, 0)))


@dataclass
class CheckRun:
    """What a `check` run found, fixed and failed on."""

    findings: list[Finding] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    fixed: int = 0
    diffs: list[str] = field(default_factory=list)


def check_files(paths: list[Path], projects: ProjectSettings, fix: str | None = None,
                unsafe: bool = False, cache: Cache | None = None, jobs: int = 1) -> CheckRun:
    """Findings for every file under `paths` (fixed first with `fix` "write" or "diff").

    Each file is checked with the settings of its own nearest pyproject.toml. Raises `ConfigError`
    when one of those is invalid.
    """
    run = CheckRun()
    items: list[tuple[Path, str, Settings]] = []

    def skip_folder(folder: Path) -> bool:  # judged by the project that holds the folder
        return projects.for_path(Path(os.path.abspath(folder)).parent).excluded(folder, folder=True)

    for path in python_files(paths, skip_folder):
        settings = projects.for_path(path)
        if settings.excluded(path):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            if settings.enabled("GG000", str(path)):
                run.findings.append(unreadable(path, error))
            continue
        if mentions_torch(text):
            items.append((path, text, settings))
    if fix is None:
        for result in scan(items, cache, jobs):
            run.findings.extend(result.findings)
            if result.failure is not None:
                run.failures.append(result.failure)
        return run
    project = project_index()
    for path, text, settings in items:
        try:
            fixed = fix_file(str(path), text, settings, project, unsafe)
        except Exception as error:  # one file's failure must not hide the others' fixes
            if os.environ.get("GRADGUARD_DEBUG"):
                raise
            run.failures.append(f"{path}: {type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}")
            continue
        run.findings.extend(fixed.remaining)
        run.fixed += fixed.fixed
        if fixed.text != text and fix == "diff":
            run.diffs.append(unified_diff(str(path), text, fixed.text))
        elif fixed.text != text:
            path.write_text(fixed.text, encoding="utf-8")
    return run


def run_check(args: argparse.Namespace) -> int:
    try:
        check_codes(args.select or [], "--select")
        check_codes(args.ignore or [], "--ignore")
        projects = ProjectSettings(no_config=args.no_config, select=args.select, ignore=args.ignore)
        for path in args.paths:  # an invalid configuration stops gradguard before any analysis
            projects.for_path(path)
    except ConfigError as error:
        print(f"gradguard: {error}", file=sys.stderr)
        return 2
    missing = [p for p in args.paths if not p.exists()]
    if missing:
        print(f"gradguard: no such file or folder: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    fix = "diff" if args.diff else "write" if args.fix else None
    try:
        cache = None if args.no_cache else Cache(args.cache_dir)
        run = check_files(args.paths, projects, fix, args.unsafe_fixes, cache, max(args.jobs, 1))
    except ConfigError as error:  # a nested project's pyproject.toml, met while walking
        print(f"gradguard: {error}", file=sys.stderr)
        return 2
    if fix == "diff":
        sys.stdout.write("".join(run.diffs))
        print(f"Would fix {run.fixed} problem{'s' if run.fixed != 1 else ''}.", file=sys.stderr)
    else:
        output = RENDERERS[args.format](run.findings)
        if output:
            print(output)
        if args.format == "text":
            fixed = f" ({run.fixed} fixed)" if fix else ""
            count = len(run.findings)
            print(f"Found {count} problem{'s' if count != 1 else ''}{fixed}.", file=sys.stderr)
    for failure in run.failures:
        print(f"gradguard: internal error in {failure}", file=sys.stderr)
    if run.failures:
        return 2
    found = run.diffs if fix == "diff" else [f for f in run.findings if f.severity is not Severity.INFO]
    return 0 if args.exit_zero or not found else 1  # information (a file skipped for its size) fails nothing


def run_lsp(args: argparse.Namespace) -> int:
    from gradguard.lsp.server import start  # pygls is imported only by the server

    if args.log_file is not None:
        logging.basicConfig(filename=args.log_file, level=logging.DEBUG if args.verbose else logging.INFO)
    start("tcp" if args.tcp else "stdio", args.host, args.port)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "check":
            return run_check(args)
        if args.command == "lsp":
            return run_lsp(args)
        if args.command == "verify":
            from gradguard.cli.verify import run_verify

            return run_verify(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gradguard check | head`: the reader left, stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as error:  # an internal error: say so without a traceback
        if os.environ.get("GRADGUARD_DEBUG"):
            raise
        print(f"gradguard: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    return 2
