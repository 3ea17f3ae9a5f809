"""`gradguard check [PATHS...]`: analyse files (or standard input), fix them, print findings; the
exit code."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from gradguard import PYTHON_VARIABLE
from gradguard.cli import report
from gradguard.cli.report import CheckRun
from gradguard.cli.cache import Cache
from gradguard.cli.files import mentions_torch, python_files
from gradguard.cli.output import cell_diffs, unified_diff
from gradguard.cli.scan import scan
from gradguard.config import (
    ConfigError,
    Overrides,
    ProjectSettings,
    Settings,
    check_codes,
    find_pyproject,
    parse_toml,
    settings_from_table,
)
from gradguard.findings import Finding, Severity
from gradguard.project_python import Interpreter, InterpreterError, find_interpreter, runs_here
from gradguard.source.files import (
    NOTEBOOK_MAX_BYTES,
    NotANotebook,
    SourceChanged,
    SourceFile,
    is_notebook,
    read_bytes,
    read_source,
    replace_source,
)
from gradguard.source.lines import lines_of

if TYPE_CHECKING:
    from gradguard.analysis.project import ProjectIndex
    from gradguard.source.notebook import Notebook

# The engine (libcst, the rules: 0.3 s) is imported in the functions that analyse or fix: a run
# the cache answers, or `--help`, never pays for it.

STDIN = Path("-")
FIX_ATTEMPTS = 3  # times a file another writer changed meanwhile is read and fixed again


def _failure(path: str | Path, error: Exception) -> str:
    message = str(error).splitlines()[0][:200] if str(error) else ""
    return f"{path}: {type(error).__name__}: {message}"


def _files_to_check(paths: list[Path], projects: ProjectSettings,
                    respect_gitignore: bool) -> Iterator[tuple[Path, Settings]]:
    """The files under `paths` that their settings do not exclude, each with its settings."""
    def skip_folder(folder: Path) -> bool:  # judged by the project that holds the folder
        return projects.for_path(Path(os.path.abspath(folder)).parent).excluded(folder, folder=True)

    for path in python_files(paths, skip_folder, respect_gitignore):
        settings = projects.for_path(path)
        if not settings.excluded(path):
            yield path, settings


def show_settings(paths: list[Path], projects: ProjectSettings, interpreter: Interpreter | None,
                  respect_gitignore: bool) -> None:
    """`--show-settings`: the settings of the first file to check (else of the first path), where
    they were read from, and the interpreter whose libraries are read."""
    path, settings = next(_files_to_check(paths, projects, respect_gitignore), (paths[0], projects.for_path(paths[0])))
    print(f"Resolved settings for: {json.dumps(os.path.abspath(path))}")
    print(f"Settings path: {json.dumps(str(settings.path)) if settings.path else 'none (the defaults)'}")
    print()
    print("\n".join(settings.describe()))
    python = interpreter.describe() if interpreter else f"{sys.executable} (gradguard's own)"
    print(f"python = {json.dumps(python)}")


def check_files(paths: list[Path], projects: ProjectSettings, fix: str | None = None, unsafe: bool = False,
                cache: Cache | None = None, jobs: int = 1, respect_gitignore: bool = True) -> CheckRun:
    """Findings for every file under `paths` (fixed first with `fix` "write" or "diff").

    Each file is checked with the settings of its own nearest pyproject.toml. Raises `ConfigError`
    when one of those is invalid.
    """
    run = CheckRun()
    items: list[tuple[Path, str, Settings]] = []
    sources: dict[Path, SourceFile] = {}
    notebooks: dict[Path, Notebook] = {}  # their items hold their programs: findings are placed in cells after

    seen: set[str] = set()
    for path, settings in _files_to_check(paths, projects, respect_gitignore):
        real = os.path.realpath(path)
        if real in seen:
            continue  # named twice, or reached again through a link: checked (and fixed) once
        seen.add(real)
        try:
            notebook = is_notebook(path.name)
            raw = read_bytes(path, NOTEBOOK_MAX_BYTES if notebook else None)
            if not notebook and not mentions_torch(raw):
                continue
            source = sources[path] = read_source(path, raw)
            if notebook:
                from gradguard.source.notebook import Notebook, notebook_json  # a run without notebooks never imports it

                if not mentions_torch(raw):
                    notebook_json(source.text)  # a file that is no notebook is reported, torch or not
                    continue
                notebooks[path] = Notebook.parse(source.text)
        except (OSError, NotANotebook) as error:
            from gradguard.engine import analyse_document
            from gradguard.source.document import Document

            run.findings.extend(analyse_document(Document.unreadable(str(path), error), settings))
            continue
        items.append((path, notebooks[path].analysable_program if path in notebooks else source.text, settings))
        run.sources[str(path)] = source.text
        if path in notebooks:
            run.add_cells(str(path), notebooks[path])
    if fix is None:
        for (path, _, settings), result in zip(items, scan(items, cache, jobs)):
            notebook = notebooks.get(path)
            run.findings.extend(result.findings if notebook is None else _in_cells(str(path), notebook, settings,
                                                                                    result.findings))
            if result.failure is not None:
                run.failures.append(result.failure)
        return run
    from gradguard.engine import project_index

    project = project_index()
    for path, _, settings in items:
        try:
            _fix_file(run, sources[path], notebooks.get(path), settings, project, fix, unsafe)
        except Exception as error:  # one file's failure must not hide the others' fixes
            if os.environ.get("GRADGUARD_DEBUG"):
                raise
            run.failures.append(_failure(path, error))
    return run


def _fix_file(run: CheckRun, source: SourceFile, notebook: Notebook | None, settings: Settings,
              project: ProjectIndex, fix: str, unsafe: bool) -> None:
    """Fix one file (`--fix` writes it, `--diff` prints its diff). When another writer changed it
    after it was read (another `--fix` run, an editor), its fix is not written: it is read again
    and its current text fixed, `FIX_ATTEMPTS` times at most, so that what the run reports holds
    for the file as it is now, not for a text it no longer has."""
    from gradguard.engine import analyse_document
    from gradguard.source.document import Document

    filename = str(source.path)
    for _ in range(FIX_ATTEMPTS):
        try:
            if notebook is not None:
                _fix_notebook(run, source, notebook, settings, project, fix, unsafe)
            else:
                _fix_python(run, source, settings, project, fix, unsafe)
            return
        except SourceChanged as error:
            changed = error
        try:
            source = read_source(source.path, limit=NOTEBOOK_MAX_BYTES if notebook is not None else None)
            if notebook is not None:
                from gradguard.source.notebook import Notebook

                notebook = Notebook.parse(source.text)
        except (OSError, NotANotebook) as error:
            run.sources.pop(filename, None)
            run.findings.extend(analyse_document(Document.unreadable(filename, error), settings))
            return
        run.sources[filename] = source.text
        if notebook is not None:
            run.add_cells(filename, notebook)
    run.unwritten.append(f"{filename}: not fixed: {changed.strerror}")  # it keeps changing: its text as last read
    run.findings.extend(_unfixed(filename, source.text, notebook, settings, project))


def _unfixed(filename: str, text: str, notebook: Notebook | None, settings: Settings,
             project: ProjectIndex) -> list[Finding]:
    """The findings of a file (`text`, or `notebook`'s cells) that could not be fixed."""
    from gradguard.engine import analyse_document
    from gradguard.source.document import Document

    if notebook is None:
        return analyse_document(Document.parse(filename, text), settings, project)
    return _in_cells(filename, notebook, settings, analyse_document(
        Document.parse(filename, notebook.analysable_program), settings, project))


def _fix_python(run: CheckRun, source: SourceFile, settings: Settings, project: ProjectIndex, fix: str,
                unsafe: bool) -> None:
    """Fix a Python file; raises `SourceChanged` when it changed since it was read (nothing written)."""
    from gradguard.engine import fix_document

    filename, text = str(source.path), source.text
    fixed = fix_document(filename, text, settings, project, unsafe)
    if fixed.text != text and fix == "write":
        try:
            replace_source(source, fixed.text)
        except SourceChanged:
            raise
        except OSError as error:  # the file is as it was: its findings stand unfixed
            run.unwritten.append(f"{filename}: not fixed: {error.strerror or error}")
            run.findings.extend(_unfixed(filename, text, None, settings, project))
            return
        run.sources[filename] = fixed.text
    elif fixed.text != text:
        run.diffs.append(unified_diff(filename, text, fixed.text))
    run.findings.extend(fixed.remaining)
    if fixed.fixed:
        run.fixed[filename] = fixed.fixed_codes


def _in_cells(filename: str, notebook: Notebook, settings: Settings, findings: list[Finding]) -> list[Finding]:
    """A notebook's findings (in its program's lines) placed in its cells, with a GG000 for each
    cell that does not parse (left out of the program)."""
    localised = [notebook.localised(f) for f in findings]
    if notebook.broken:
        from gradguard.engine import broken_cells

        localised = sorted([*broken_cells(filename, notebook, settings), *localised],
                           key=lambda f: (f.span.cell or 0, f.span.start, f.code))
    return localised


def _fix_notebook(run: CheckRun, source: SourceFile, notebook: Notebook, settings: Settings,
                  project: ProjectIndex, fix: str, unsafe: bool) -> None:
    """Fix a notebook's cells (`--fix` writes it, `--diff` prints each changed cell's diff); raises
    `SourceChanged` when it changed since it was read (nothing written)."""
    from gradguard.engine import fix_notebook

    filename = str(source.path)
    fixed_notebook, fixed = fix_notebook(filename, notebook, settings, project, unsafe)
    if fixed_notebook.text != notebook.text and fix == "write":
        try:
            replace_source(source, fixed_notebook.text)
        except SourceChanged:
            raise
        except OSError as error:  # the file is as it was: its findings stand unfixed
            run.unwritten.append(f"{filename}: not fixed: {error.strerror or error}")
            run.findings.extend(_unfixed(filename, notebook.text, notebook, settings, project))
            return
        run.sources[filename] = fixed_notebook.text
        run.add_cells(filename, fixed_notebook)
    elif fixed_notebook.text != notebook.text:
        run.diffs.extend(cell_diffs(filename, notebook, fixed_notebook))
    run.findings.extend(_in_cells(filename, fixed_notebook, settings, fixed.remaining))
    if fixed.fixed:
        run.fixed[filename] = fixed.fixed_codes


def check_text(filename: str, text: str, settings: Settings, fix: str | None, unsafe: bool) -> CheckRun:
    """`check -`: the findings of `text` (standard input, named `filename`), fixed with `fix`."""
    from gradguard.engine import analyse_document, fix_document, project_index
    from gradguard.source.document import Document

    run = CheckRun(sources={filename: text})
    if is_notebook(filename):
        return _check_notebook_text(run, filename, text, settings, fix, unsafe)
    if fix is None:
        run.findings = analyse_document(Document.parse(filename, text), settings, project_index())
        return run
    fixed = fix_document(filename, text, settings, project_index(), unsafe)
    run.findings = fixed.remaining
    if fixed.fixed:
        run.fixed[filename] = fixed.fixed_codes
    if fix == "diff" and fixed.text != text:
        run.diffs.append(unified_diff(filename, text, fixed.text))
    run.fixed_text = fixed.text
    return run


def _check_notebook_text(run: CheckRun, filename: str, text: str, settings: Settings, fix: str | None,
                         unsafe: bool) -> CheckRun:
    """`check -` of a notebook's JSON text."""
    from gradguard.engine import analyse_document, fix_notebook, project_index
    from gradguard.source.document import Document
    from gradguard.source.notebook import Notebook

    try:
        notebook = Notebook.parse(text)
    except NotANotebook as error:
        run.findings = analyse_document(Document.unreadable(filename, error), settings)
        return run
    run.add_cells(filename, notebook)
    if fix is None:
        run.findings = _in_cells(filename, notebook, settings, analyse_document(
            Document.parse(filename, notebook.analysable_program), settings, project_index()))
        return run
    fixed_notebook, fixed = fix_notebook(filename, notebook, settings, project_index(), unsafe)
    run.findings = _in_cells(filename, fixed_notebook, settings, fixed.remaining)
    if fixed.fixed:
        run.fixed[filename] = fixed.fixed_codes
    if fix == "diff":
        run.diffs.extend(cell_diffs(filename, notebook, fixed_notebook))
    run.fixed_text = fixed_notebook.text
    run.add_cells(filename, fixed_notebook)
    return run


def add_noqa(run: CheckRun) -> int:
    """Write `# noqa: CODE` on the line of each finding of `run` (in a notebook, on its cell's
    line); how many lines changed."""
    from gradguard.engine import edited_cell
    from gradguard.fixes.edits import apply_edits

    by_file: dict[str, dict[tuple[int | None, int], list[str]]] = {}
    for finding in run.findings:
        by_file.setdefault(finding.filename, {}).setdefault(
            (finding.span.cell, finding.span.start.line), []).append(finding.code)
    changed = 0
    for filename, lines in by_file.items():
        try:
            source = read_source(Path(filename))
        except OSError:
            continue  # unreadable: reported as GG000 already
        if source.text != run.sources.get(filename):
            run.unwritten.append(f"{filename}: no noqa written: the file changed since it was checked")
            continue
        if is_notebook(filename):
            from gradguard.source.notebook import Notebook

            try:
                notebook = Notebook.parse(source.text)
            except NotANotebook:
                continue  # reported as GG000 already
            sources, count = {}, 0
            for cell in notebook.cells:
                wanted = {line: codes for (number, line), codes in lines.items()
                          if number == cell.number and line not in cell.masked}
                if edits := _noqa_edits(cell.source, wanted):
                    sources[cell.number], count = edited_cell(cell.source, edits), count + len(edits)
            text = notebook.with_sources(sources).text if sources else source.text
        else:
            edits = _noqa_edits(source.text, {line: codes for (_, line), codes in lines.items()})
            text, count = apply_edits(source.text, edits), len(edits)
        if not count:
            continue
        try:
            replace_source(source, text)
        except OSError as error:
            run.unwritten.append(f"{filename}: no noqa written: {error.strerror or error}")
            continue
        changed += count
    return changed


def _noqa_edits(text: str, lines: dict[int, list[str]]) -> list:
    """The `# noqa: CODE` edits of `text` for the codes found on each of its `lines`."""
    from gradguard.fixes.noqa import lines_ending_in_strings, noqa_edit

    text_lines, in_strings = lines_of(text), lines_ending_in_strings(text)
    return [edit for line, codes in lines.items() if 0 < line <= len(text_lines)
            for edit in [noqa_edit(text_lines[line - 1].rstrip("\r\n"), line, codes, line in in_strings)]
            if edit is not None]


def _overrides(args: argparse.Namespace) -> Overrides:
    return Overrides(select=tuple(args.select or ()), extend_select=tuple(args.extend_select or ()),
                     ignore=tuple(args.ignore or ()),
                     per_file_ignores=tuple(args.per_file_ignores) if args.per_file_ignores is not None else None,
                     extend_per_file_ignores=tuple(args.extend_per_file_ignores or ()),
                     exclude=tuple(args.exclude) if args.exclude is not None else None,
                     extend_exclude=tuple(args.extend_exclude or ()))


def config_arguments(values: list[str]) -> tuple[Path | None, dict]:
    """`--config` values, Ruff's two kinds: at most one file (a path that exists), and settings of
    `[tool.gradguard]` as TOML `KEY = VALUE` (checked here); `ConfigError` for anything else."""
    files = [Path(value) for value in values if os.path.isfile(value)]
    if len(files) > 1:
        raise ConfigError(f"--config names {len(files)} files: give one")
    inline: dict = {}
    for value in values:
        if os.path.isfile(value):
            continue
        if "=" not in value:
            raise ConfigError(f"--config {value}: no such file, and no KEY=VALUE setting")
        inline.update(parse_toml(value, f"--config {value}"))
    try:
        settings_from_table(inline)
    except ConfigError as error:
        raise ConfigError(f"--config: {error}") from error
    return (files[0] if files else None), inline


def default_cache_dir() -> Path:
    """`.gradguard_cache` at the project's root: beside the nearest pyproject.toml, else here."""
    pyproject = find_pyproject(Path.cwd())
    return (pyproject.parent if pyproject is not None else Path.cwd()) / ".gradguard_cache"


def libraries_interpreter(python: str | None, path: Path) -> Interpreter | None:
    """The interpreter whose installed libraries are read: `python` (`--python`; raises
    `InterpreterError` when it does not exist), else the one `verify` would find for `path`; None
    when there is none (gradguard's own libraries are read)."""
    try:
        return find_interpreter(path, python)
    except InterpreterError:
        if python:
            raise
        return None


def _usage_error(args: argparse.Namespace, stdin: bool) -> str | None:
    """Why these options cannot go together (None: they can)."""
    if args.stdin_filename is not None and args.paths not in ([], [STDIN]):
        return "--stdin-filename reads standard input: name no other path"
    if args.add_noqa and (stdin or args.fix or args.diff):
        return "--add-noqa writes the files it checks: it takes neither standard input nor --fix/--diff"
    if args.watch and (stdin or args.add_noqa or args.statistics or args.show_settings):
        return ("--watch checks files again as they change: it takes neither standard input, --add-noqa, "
                "--statistics nor --show-settings")
    if args.statistics and args.format not in report.STATISTICS_FORMATS:
        return f"--statistics prints text (full, concise) or json, not {args.format}"
    return None


def run_check(args: argparse.Namespace) -> int:
    """`gradguard check`: its exit code (0 clean, 1 found, 2 could not run)."""
    stdin = args.paths == [STDIN] or args.stdin_filename is not None and not args.paths
    if (problem := _usage_error(args, stdin)) is not None:
        print(f"gradguard: {problem}", file=sys.stderr)
        return 2
    if args.watch:
        return _watch(args)
    run = _check(args, stdin)
    if isinstance(run, int):
        return run
    if args.add_noqa:
        return _report_noqa(run, add_noqa(run), args)
    fix = _fix_mode(args)
    try:
        with _output(args.output_file) as out:
            report.print_run(run, args, fix, stdin, out)
    except OSError as error:
        print(f"gradguard: cannot write {args.output_file}: {error.strerror or error}", file=sys.stderr)
        return 2
    return _exit_code(run, args, fix)


def _watch(args: argparse.Namespace) -> int:
    """`--watch`: a run now and after each change, printed as Ruff's watch mode prints them (on
    stdout, `--output-file` aside)."""
    from gradguard.cli.watch import watch

    paths = args.paths or [Path(".")]
    if not _all_exist(paths):
        return 2

    def check_once() -> None:
        run = _check(args, stdin=False)
        if not isinstance(run, int):
            report.print_watched(run, args)

    return watch(paths, check_once)


def _all_exist(paths: list[Path]) -> bool:
    """Whether every path named exists (a looping link does: it is reported as unreadable); if
    not, says which do not."""
    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        print(f"gradguard: no such file or folder: {', '.join(map(str, missing))}", file=sys.stderr)
    return not missing


def _fix_mode(args: argparse.Namespace) -> str | None:
    return "diff" if args.diff else "write" if args.fix else None


def _output(path: Path | None) -> AbstractContextManager[TextIO]:
    """`--output-file` (its folders created), or stdout."""
    if path is None:
        return nullcontext(sys.stdout)
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "w", encoding="utf-8")


def _exit_code(run: CheckRun, args: argparse.Namespace, fix: str | None) -> int:
    """2 when something could not be done, else 1 when a finding of `--fail-on`'s severity or graver
    is left (or, with `--diff`, something would be fixed), else 0."""
    if run.failures or run.unwritten:
        return 2
    if args.exit_zero:
        return 0
    if fix == "diff":
        return 1 if run.diffs else 0
    fail_on = Severity(args.fail_on)
    found = [f for f in run.findings if f.severity.at_least(fail_on)]
    return 1 if found or (args.exit_non_zero_on_fix and run.fixed) else 0


def _check(args: argparse.Namespace, stdin: bool) -> CheckRun | int:
    """One run of `check` as `args` asks (its settings read afresh), or the exit code of one that
    reports no findings: 2 when it could not run, 0 when `--show-settings` printed the settings."""
    paths = args.paths or [Path(".")]
    try:
        for flag in ("select", "extend_select", "ignore"):
            check_codes(getattr(args, flag) or [], "--" + flag.replace("_", "-"))
        for flag in ("per_file_ignores", "extend_per_file_ignores"):
            for pattern, codes in getattr(args, flag) or []:
                check_codes(codes, f"--{flag.replace('_', '-')} {pattern}")
        config, inline = config_arguments(args.config or [])
        projects = ProjectSettings(no_config=args.no_config, config=config, inline=inline, overrides=_overrides(args))
        settings_paths = [Path(args.stdin_filename or ".")] if stdin else paths
        for path in settings_paths:  # an invalid configuration stops gradguard before any analysis
            projects.for_path(path)
        interpreter = libraries_interpreter(args.python, settings_paths[0])
    except (ConfigError, InterpreterError) as error:
        print(f"gradguard: {error}", file=sys.stderr)
        return 2
    if interpreter is not None and not runs_here(interpreter.executable):  # read by every project index of
        os.environ[PYTHON_VARIABLE] = interpreter.executable  # this run, in worker processes too, and the cache
    else:
        os.environ.pop(PYTHON_VARIABLE, None)  # gradguard's own: its `sys.path`
    fix = _fix_mode(args)
    try:
        if args.show_settings:
            show_settings(settings_paths, projects, interpreter, args.respect_gitignore)
            return 0
        if stdin:
            filename = args.stdin_filename or "-"
            return check_text(filename, sys.stdin.read(), projects.for_path(Path(args.stdin_filename or ".")),
                              fix, args.unsafe_fixes)
        if not _all_exist(paths):
            return 2
        cache = None if args.no_cache or fix is not None else Cache(args.cache_dir or default_cache_dir())
        return check_files(paths, projects, fix, args.unsafe_fixes, cache, max(args.jobs, 1), args.respect_gitignore)
    except ConfigError as error:  # a nested project's pyproject.toml, met while walking
        print(f"gradguard: {error}", file=sys.stderr)
        return 2


def _report_noqa(run: CheckRun, changed: int, args: argparse.Namespace) -> int:
    report.print_problems(run)
    if not args.silent:
        print(f"Added {changed} noqa directive{'s' if changed != 1 else ''}.", file=sys.stderr)
    return 2 if run.failures or run.unwritten else 0
