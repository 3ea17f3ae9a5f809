"""The `gradguard` command (and `python -m gradguard`): its subcommands, each handed to its
front end (`check`, `explain`, `rule` and `verify` to `cli/`, `lsp` to `lsp/`), and one policy for what escapes
them (an interrupt, a closed pipe, an internal error)."""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from gradguard import __version__


FORMATS = ["concise", "full", "github", "json", "json-lines", "sarif"]  # cli/report.py's, without importing it


def _codes(value: str) -> list[str]:
    codes = [c.strip().upper() for c in value.split(",") if c.strip()]
    return ["GG" if code == "ALL" else code for code in codes]


def _globs(value: str) -> list[str]:
    return [glob.strip() for glob in value.split(",") if glob.strip()]


def _per_file(value: str) -> tuple[str, tuple[str, ...]]:
    pattern, colon, codes = value.rpartition(":")
    if not colon or not pattern or not _codes(codes):
        raise argparse.ArgumentTypeError(f"expected GLOB:CODES such as tests/*.py:GG004, not {value!r}")
    return pattern, tuple(_codes(codes))


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(f"must be a positive, finite number of seconds, not {value!r}")
    return seconds


def _input(value: str) -> dict:
    from gradguard.verify.settings import input_spec

    try:
        return input_spec(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's own, sized as shutil.get_terminal_size() would size it, without importing shutil
    and the three compression modules it imports: argparse builds a formatter for every option added."""

    def __init__(self, prog: str) -> None:
        try:
            columns = int(os.environ["COLUMNS"])
        except (KeyError, ValueError):
            try:
                columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
            except (AttributeError, ValueError, OSError):
                columns = 80
        super().__init__(prog, width=max(columns, 24) - 2)


def _lsp_arguments(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--stdio", action="store_true", help="serve over stdio (the default)")
    serve.add_argument("--tcp", action="store_true", help="serve over TCP")
    serve.add_argument("--host", default="127.0.0.1", help="with --tcp, the address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=2087, help="with --tcp, the port (default: 2087)")
    serve.add_argument("--allow-remote", action="store_true",
                       help="with --tcp, allow a --host that is not a loopback address")
    serve.add_argument("--log-file", type=Path, help="also write the server's log to this file")
    serve.add_argument("-v", "--verbose", action="store_true", help="log debug messages")


def _check_arguments(check: argparse.ArgumentParser) -> None:
    check.add_argument("paths", nargs="*", type=Path,
                       help="files and folders to check (default: the current folder); - reads standard input")
    check.add_argument("--output-format", "--format", dest="format", choices=FORMATS, default="full",
                       help="full: each finding with its source lines (the default); concise: one line each; "
                       "json, json-lines, sarif, github")
    check.add_argument("--fix", action="store_true", help="apply safe fixes to the files")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff, apply unsafe fixes too")
    check.add_argument("--diff", action="store_true", help="print the fixes as a diff, change no file")
    check.add_argument("--show-fixes", action="store_true", help="with --fix, list what was fixed, file by file")
    check.add_argument("--statistics", action="store_true",
                       help="count the findings by rule instead of listing them (text, or json with "
                       "--output-format json)")
    check.add_argument("-o", "--output-file", type=Path, metavar="PATH",
                       help="write the output to PATH instead of stdout (folders above it are created)")
    check.add_argument("-w", "--watch", action="store_true",
                       help="check again whenever a .py, .pyi, .ipynb or .toml file under the paths changes")
    check.add_argument("--fail-on", choices=["error", "warning", "info"], default="warning",
                       help="the lowest severity whose findings make the exit code 1 (default: warning; "
                       "error: warnings and notes are printed but pass)")
    check.add_argument("--add-noqa", action="store_true",
                       help="write `# noqa: CODE` on each line with a finding (keeps the codes already there)")
    check.add_argument("--exit-non-zero-on-fix", action="store_true",
                       help="exit 1 when a fix was applied, even if nothing is left")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when something is found")
    check.add_argument("-q", "--quiet", action="store_true", help="print the findings only, no summary")
    check.add_argument("-s", "--silent", action="store_true", help="print nothing (the exit code says it)")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="read the source from standard input, as the file PATH (its settings, its name)")
    check.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to report (ALL: every rule)")
    check.add_argument("--extend-select", type=_codes, help="codes or prefixes to report besides the selected ones")
    check.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to skip")
    check.add_argument("--per-file-ignores", type=_per_file, action="append", metavar="GLOB:CODES",
                       help="ignore CODES in files matching GLOB, instead of the configuration's table (repeatable)")
    check.add_argument("--extend-per-file-ignores", type=_per_file, action="append", metavar="GLOB:CODES",
                       help="as --per-file-ignores, added to the configuration's table")
    config = check.add_mutually_exclusive_group()
    config.add_argument("--config", action="append", metavar="CONFIG_OPTION",
                        help="a pyproject.toml whose [tool.gradguard] applies to every file instead of each file's "
                        "own (its globs relative to the current folder), or one setting of that table that "
                        "replaces the configuration's, such as \"ignore = ['GG004']\" (repeatable)")
    config.add_argument("--no-config", action="store_true", help="ignore [tool.gradguard] in pyproject.toml")
    check.add_argument("--exclude", type=_globs, metavar="GLOBS",
                       help="comma-separated gitignore patterns of files and folders to skip, relative to the current "
                       "folder, instead of the configuration's exclude")
    check.add_argument("--extend-exclude", type=_globs, metavar="GLOBS",
                       help="as --exclude, besides the configuration's exclude")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings the first file to check gets (and where they come from), then exit")
    check.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                       help="also check the files .gitignore excludes when walking folders")
    check.add_argument("--no-cache", action="store_true", help="analyse every file, ignore the result cache")
    check.add_argument("--cache-dir", type=Path,
                       help="where results are cached (default: .gradguard_cache at the project's root)")
    check.add_argument("--python", metavar="PATH",
                       help="the project's interpreter, whose installed libraries are read (an executable or an "
                       "environment's folder; default: as verify finds it: VIRTUAL_ENV (unless it is gradguard's own), "
                       "a .venv of the project, "
                       "CONDA_PREFIX, gradguard's own if it has torch, then python3)")
    check.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                       help="processes analysing files in parallel (default: all cores)")


def _rule_arguments(rule: argparse.ArgumentParser) -> None:
    rule.add_argument("code", nargs="?", help="the rule's code, such as GG001")
    rule.add_argument("--all", action="store_true", help="every rule")
    rule.add_argument("--output-format", "--format", dest="format", choices=["text", "json"], default="text")


def _verify_arguments(verify: argparse.ArgumentParser) -> None:
    verify.add_argument("paths", nargs="+", type=Path, metavar="FILE")
    verify.add_argument("--target", help="a module class or function of the file to run (default: run it as a script)")
    verify.add_argument("--device", choices=["auto", "cpu", "cuda"], help="auto: CUDA when available, else the CPU")
    verify.add_argument("--timeout", type=_seconds, help="seconds of wall time per file (default: 120)")
    verify.add_argument("--format", choices=["text", "json"], default="text")
    verify.add_argument("--python", metavar="PATH",
                        help="the project's interpreter, whose torch runs the code (an executable or an environment's "
                        "folder; default: VIRTUAL_ENV, a .venv of the project, CONDA_PREFIX, then python3)")
    verify.add_argument("--input", dest="inputs", action="append", type=_input, metavar="SHAPE[:DTYPE]",
                        help="a random input for the target's forward, once per input in order "
                        "(such as --input 2,64 --input 2,64:bool)")


def _location(value: str) -> tuple[Path, int]:
    from gradguard.cli.explain import location

    return location(value)


def _explain_arguments(explain: argparse.ArgumentParser) -> None:
    explain.add_argument("location", type=_location, metavar="FILE:LINE", help="the line to explain (from 1)")
    explain.add_argument("--output-format", "--format", dest="format", choices=["text", "json"], default="text")
    explain.add_argument("--python", metavar="PATH",
                         help="the project's interpreter, whose installed libraries are read (as check's --python)")


# Each subcommand: its help, its description, and what adds its arguments.
SUBCOMMANDS = {
    "lsp": ("run the language server (stdio by default)", None, _lsp_arguments),
    "check": ("analyse files and folders", "Analyse Python files for in-place changes that break backward().",
              _check_arguments),
    "explain": ("print what the analysis believes at a line: each name's value, why each change was reported or not",
                "Print what the analysis believes at FILE:LINE: the value each name there holds (tensor or not, "
                "requires grad, leaf, saves, graph known/unknown/empty) and, for each in-place change there, why "
                "each rule reported it or not.", _explain_arguments),
    "rule": ("print a rule's documentation", "Print a rule's documentation.", _rule_arguments),
    "verify": ("run files under the tracer (in a child process) and merge what it finds with the static findings",
               None, _verify_arguments),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line of every subcommand, or of `command` alone: argparse's parsers are costly to
    build (each looks up its translations), and a run needs only its own."""
    parser = argparse.ArgumentParser(prog="gradguard", description="In-place tensor changes that break backward().",
                                     formatter_class=_HelpFormatter)
    parser.add_argument("--version", action="version", version=f"gradguard {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, (summary, description, add_arguments) in SUBCOMMANDS.items():
        if command in (None, name):
            add_arguments(commands.add_parser(name, help=summary, description=description,
                                              formatter_class=_HelpFormatter))
    return parser


def _loopback(host: str) -> bool:
    import ipaddress

    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _serve(args: argparse.Namespace) -> int:
    if args.tcp and not _loopback(args.host) and not args.allow_remote:
        print(f"gradguard: --host {args.host} is not a loopback address: any machine that reaches it could "
              "use the server; pass --allow-remote if that is what you want", file=sys.stderr)
        return 2
    import logging

    from gradguard.lsp.server import start  # pygls is imported only by the server
    from gradguard.lsp.verify_command import TOKEN_VARIABLE
    from gradguard.verify.runner import stop_all

    if args.log_file is not None:
        logging.basicConfig(filename=args.log_file, level=logging.DEBUG if args.verbose else logging.INFO)
    try:  # over TCP any local process may connect: running code then needs the token ("": refused)
        start("tcp" if args.tcp else "stdio", args.host, args.port,
              token=os.environ.get(TOKEN_VARIABLE, "") if args.tcp else None)
    finally:  # the editor left (or the server was stopped): no run of the user's code outlives it
        stop_all()
    return 0


def _exit_on(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds: a verification under way kills what it started


def _run(args: argparse.Namespace) -> int:
    if args.command == "lsp":
        return _serve(args)
    if args.command == "rule":
        from gradguard.cli.rule import run_rule

        return run_rule(args)
    if args.command == "explain":
        from gradguard.cli.explain import run_explain

        return run_explain(args)
    if args.command == "verify":
        from gradguard.cli.verify import run_verify

        return run_verify(args)
    from gradguard.cli.check import run_check

    return run_check(args)


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; its exit code."""
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words and words[0] in SUBCOMMANDS else None)
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said with the usage of the subcommand they were given to
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        commands.choices[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
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
