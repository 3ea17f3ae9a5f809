"""`gradguard check [PATHS...]`: analyse files, fix them, print findings; the exit code."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from gradguard.config import ConfigError, ProjectSettings, Settings, check_codes
from gradguard.engine import analyse_document, fix_document, project_index
from gradguard.findings import Finding, Severity
from gradguard.cli.files import mentions_torch, python_files
from gradguard.cli.cache import Cache
from gradguard.cli.scan import scan
from gradguard.cli.output import RENDERERS, unified_diff
from gradguard.source.document import Document
from gradguard.source.files import SourceFile, read_bytes, read_source, replace_source


@dataclass
class CheckRun:
    """What a `check` run found, fixed and failed on."""

    findings: list[Finding] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    unwritten: list[str] = field(default_factory=list)  # files whose fixes could not be written
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
    sources: dict[Path, SourceFile] = {}

    def skip_folder(folder: Path) -> bool:  # judged by the project that holds the folder
        return projects.for_path(Path(os.path.abspath(folder)).parent).excluded(folder, folder=True)

    for path in python_files(paths, skip_folder):
        settings = projects.for_path(path)
        if settings.excluded(path):
            continue
        try:
            raw = read_bytes(path)
            if not mentions_torch(raw):
                continue
            source = sources[path] = read_source(path, raw)
        except OSError as error:
            run.findings.extend(analyse_document(Document.unreadable(str(path), error), settings))
            continue
        items.append((path, source.text, settings))
    if fix is None:
        for result in scan(items, cache, jobs):
            run.findings.extend(result.findings)
            if result.failure is not None:
                run.failures.append(result.failure)
        return run
    project = project_index()
    for path, text, settings in items:
        try:
            fixed = fix_document(str(path), text, settings, project, unsafe)
        except Exception as error:  # one file's failure must not hide the others' fixes
            if os.environ.get("GRADGUARD_DEBUG"):
                raise
            run.failures.append(f"{path}: {type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}")
            continue
        if fixed.text != text and fix == "write":
            try:
                replace_source(sources[path], fixed.text)
            except OSError as error:  # the file is as it was: its findings stand unfixed
                run.unwritten.append(f"{path}: not fixed: {error.strerror or error}")
                run.findings.extend(analyse_document(Document.parse(str(path), text), settings, project))
                continue
        elif fixed.text != text:
            run.diffs.append(unified_diff(str(path), text, fixed.text))
        run.findings.extend(fixed.remaining)
        run.fixed += fixed.fixed
    return run


def run_check(args: argparse.Namespace) -> int:
    """`gradguard check`: its exit code (0 clean, 1 found, 2 could not run)."""
    try:
        check_codes(args.select or [], "--select")
        check_codes(args.ignore or [], "--ignore")
        projects = ProjectSettings(no_config=args.no_config, select=args.select, ignore=args.ignore)
        for path in args.paths:  # an invalid configuration stops gradguard before any analysis
            projects.for_path(path)
    except ConfigError as error:
        print(f"gradguard: {error}", file=sys.stderr)
        return 2
    missing = [p for p in args.paths if not os.path.lexists(p)]  # a looping link is reported as unreadable
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
    for unwritten in run.unwritten:
        print(f"gradguard: {unwritten}", file=sys.stderr)
    if run.failures or run.unwritten:
        return 2
    found = run.diffs if fix == "diff" else [f for f in run.findings if f.severity is not Severity.INFO]
    return 0 if args.exit_zero or not found else 1  # information (a file skipped for its size) fails nothing
