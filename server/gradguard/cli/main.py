"""`gradguard check [PATHS...]`: analyse files and print findings."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from gradguard import __version__
from gradguard.config import ConfigError, ProjectSettings, check_codes
from gradguard.analysis.project import ProjectIndex
from gradguard.engine import analyse_document
from gradguard.findings import Finding, Position, Severity, Span
from gradguard.cli.files import mentions_torch, python_files
from gradguard.cli.output import render_json, render_text
from gradguard.source.document import Document


def _codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gradguard", description=__doc__)
    parser.add_argument("--version", action="version", version=f"gradguard {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="analyse files and folders")
    check.add_argument("paths", nargs="*", type=Path, default=[Path(".")])
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to report")
    check.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to skip")
    check.add_argument("--no-config", action="store_true", help="ignore [tool.gradguard] in pyproject.toml")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when something is found")
    return parser


def unreadable(path: Path, error: Exception) -> Finding:
    return Finding("GG000", Severity.ERROR, f"gradguard could not read this file: {error}", str(path),
                   Span(Position(1, 0), Position(1, 0)))


def check_files(paths: list[Path], projects: ProjectSettings) -> tuple[list[Finding], list[str]]:
    """Findings for every file under `paths`, and the internal errors met on the way.

    Each file is checked with the settings of its own nearest pyproject.toml. Raises `ConfigError`
    when one of those is invalid.
    """
    project = ProjectIndex()
    findings: list[Finding] = []
    failures: list[str] = []

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
                findings.append(unreadable(path, error))
            continue
        if not mentions_torch(text):
            continue
        try:
            findings.extend(analyse_document(Document.parse(str(path), text), settings, project))
        except Exception as error:  # one file's failure must not hide the others' findings
            if os.environ.get("GRADGUARD_DEBUG"):
                raise
            failures.append(f"{path}: {type(error).__name__}: {error}")
    return findings, failures


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
    try:
        findings, failures = check_files(args.paths, projects)
    except ConfigError as error:  # a nested project's pyproject.toml, met while walking
        print(f"gradguard: {error}", file=sys.stderr)
        return 2
    output = render_json(findings) if args.format == "json" else render_text(findings)
    if output:
        print(output)
    if args.format == "text":
        print(f"Found {len(findings)} problem{'s' if len(findings) != 1 else ''}.", file=sys.stderr)
    for failure in failures:
        print(f"gradguard: internal error in {failure}", file=sys.stderr)
    if failures:
        return 2
    return 0 if args.exit_zero or not findings else 1


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "check":
            return run_check(args)
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # an internal error: say so without a traceback
        if os.environ.get("GRADGUARD_DEBUG"):
            raise
        print(f"gradguard: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    return 2
