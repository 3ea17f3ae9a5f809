"""The `gradguard` command (and `python -m gradguard`): its subcommands, each handed to its
front end (`check` and `verify` to `cli/`, `lsp` to `lsp/`), and one policy for what escapes
them (an interrupt, a closed pipe, an internal error)."""

from __future__ import annotations

import argparse
import logging
import math
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from gradguard import __version__
from gradguard.cli.output import RENDERERS


def _codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(f"must be a positive, finite number of seconds, not {value!r}")
    return seconds


def build_parser() -> argparse.ArgumentParser:
    """The command line of every subcommand."""
    parser = argparse.ArgumentParser(prog="gradguard", description="In-place tensor changes that break backward().")
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
    verify.add_argument("--timeout", type=_seconds, help="seconds of wall time per file (default: 120)")
    verify.add_argument("--format", choices=["text", "json"], default="text")
    return parser


def _serve(args: argparse.Namespace) -> int:
    from gradguard.lsp.server import start  # pygls is imported only by the server
    from gradguard.verify.runner import stop_all

    if args.log_file is not None:
        logging.basicConfig(filename=args.log_file, level=logging.DEBUG if args.verbose else logging.INFO)
    try:
        start("tcp" if args.tcp else "stdio", args.host, args.port)
    finally:  # the editor left (or the server was stopped): no run of the user's code outlives it
        stop_all()
    return 0


def _exit_on(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds: a verification under way kills what it started


def _run(args: argparse.Namespace) -> int:
    if args.command == "lsp":
        return _serve(args)
    if args.command == "verify":
        from gradguard.cli.verify import run_verify

        return run_verify(args)
    from gradguard.cli.check import run_check

    return run_check(args)


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; its exit code."""
    args = build_parser().parse_args(argv)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _exit_on)
    try:
        return _run(args)
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


if __name__ == "__main__":
    sys.exit(main())
