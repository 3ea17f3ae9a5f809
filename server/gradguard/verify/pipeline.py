"""One verification: static analysis, the run in a child process, the merge, per file."""

from __future__ import annotations

import linecache
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from gradguard.analysis.project import ProjectIndex
from gradguard.config import Settings, load_settings
from gradguard.engine import analyse_document, project_index
from gradguard.findings import Finding
from gradguard.source.document import Document
from gradguard.source.files import NOTEBOOK_MAX_BYTES, is_notebook, read_source
from gradguard.source.notebook import Notebook
from gradguard.project_python import Interpreter
from gradguard.verify.merge import Verified, merge
from gradguard.verify.runner import Entry, run_files
from gradguard.verify.settings import VerifySettings


@dataclass(frozen=True)
class FileVerification:
    """A verified file: its merged findings, and why the run could not be done, if it could not."""

    path: str
    findings: list[Verified]
    device: str | None  # where it ran (None when it could not)
    problem: str | None


def static_findings(path: Path, settings: Settings, project: ProjectIndex | None = None) -> list[Finding]:
    """What `gradguard check` finds in `path` (in a notebook: in its program's lines)."""
    text = read_source(path, limit=NOTEBOOK_MAX_BYTES if is_notebook(path.name) else None).text
    if is_notebook(path.name):
        text = Notebook.parse(text).analysable_program
        linecache.cache[str(path)] = (len(text), None, text.splitlines(True), str(path))  # `# noqa` as the merge reads it
    return analyse_document(Document.parse(str(path), text), settings, project or project_index())


def verify(files: list[tuple[str, list[Finding], Settings]], target: str | None, settings: VerifySettings,
           interpreter: Interpreter, output: IO | int | None = None) -> list[FileVerification]:
    """Run each file (a script, or its `target`) under the tracer, with the project's `interpreter`,
    and merge with its static findings."""
    entries = [Entry(path, target, tuple(sorted({f.span.start.line for f in static})),
                     settings.targets.get(target, {}) if target else {}) for path, static, _ in files]
    runs = run_files(entries, interpreter, settings.device, settings.timeout, settings.memory, output)
    return [FileVerification(path, merge(static, run, path, file_settings), run.device, run.problem)
            for (path, static, file_settings), run in zip(files, runs)]


def verify_paths(paths: list[Path], target: str | None, settings: VerifySettings, interpreter: Interpreter,
                 output: IO | int | None = None) -> list[FileVerification]:
    """`verify` for files on disk, each statically analysed with its own project's settings."""
    project = project_index()
    files = []
    for path in paths:
        file_settings = load_settings(path)
        files.append((str(path), static_findings(path, file_settings, project), file_settings))
    return verify(files, target, settings, interpreter, output)
