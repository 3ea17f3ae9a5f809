"""`gradguard explain FILE:LINE`: what the analysis believes at one line (`gradguard/explain.py`),
as text or JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from gradguard import PYTHON_VARIABLE
from gradguard.cli.check import libraries_interpreter
from gradguard.config import ConfigError, ProjectSettings
from gradguard.project_python import InterpreterError, runs_here
from gradguard.source.files import is_notebook, read_source

if TYPE_CHECKING:
    from gradguard.explain import ChangeFacts, Explanation, NameFacts

_GRAD = {"yes": "grad on", "no": "grad off", "maybe": "grad may be on"}
_BACKWARD = {"yes": "a backward pass runs through what it changes", "maybe":
             "a backward pass may run through what it changes (if one runs through what the function returns)",
             "no": "no backward pass is known to run through what it changes"}


def location(value: str) -> tuple[Path, int]:
    """FILE:LINE, as argparse reads it."""
    path, colon, line = value.rpartition(":")
    if not colon or not path or not line.isdigit() or int(line) < 1:
        raise argparse.ArgumentTypeError(f"expected FILE:LINE such as train.py:12 (lines count from 1), not {value!r}")
    return Path(path), int(line)


def run_explain(args: argparse.Namespace) -> int:
    """Print the explanation; exit 0, or 2 when the file or line cannot be read or the settings are invalid."""
    path, line = args.location
    if is_notebook(path.name):
        print(f"gradguard: {path} is a notebook: explain reads Python files", file=sys.stderr)
        return 2
    try:
        source = read_source(path)
        settings = ProjectSettings().for_path(path)
        interpreter = libraries_interpreter(args.python, path)
    except (OSError, ConfigError, InterpreterError) as error:
        print(f"gradguard: {_why(path, error)}", file=sys.stderr)
        return 2
    count = source.text.count("\n") + (not source.text.endswith("\n") and bool(source.text))
    if line > count:
        print(f"gradguard: {path} has {count} line{'s' if count != 1 else ''}: there is no line {line}", file=sys.stderr)
        return 2
    if interpreter is not None and not runs_here(interpreter.executable):
        os.environ[PYTHON_VARIABLE] = interpreter.executable
    else:
        os.environ.pop(PYTHON_VARIABLE, None)
    from gradguard.engine import project_index  # the engine: only once there is something to explain
    from gradguard.explain import explain
    from gradguard.source.document import Document

    document = Document.parse(str(path), source.text)
    if document.module is None:
        print(f"gradguard: {path} cannot be analysed: {document.syntax_problem.message}", file=sys.stderr)
        return 2
    explanation = explain(document, settings, project_index(), line)
    if args.format == "json":
        print(json.dumps(asdict(explanation), indent=2, ensure_ascii=False))
    else:
        print(render(explanation), end="")
    return 0


def _why(path: Path, error: Exception) -> str:
    if isinstance(error, FileNotFoundError):
        return f"no such file: {path}"
    if isinstance(error, OSError):
        return f"cannot read {path}: {error.strerror or error}"
    return str(error)


def render(explanation: Explanation) -> str:
    """The text format: the line, each name's value, each change and each rule's verdict on it."""
    lines = [f"{explanation.filename}:{explanation.line}: {explanation.source.strip()}"]
    lines += [text for facts in explanation.names for text in _value_lines(facts)]
    lines += [text for change in explanation.changes for text in _change_lines(change)]
    if not explanation.names and not explanation.changes:
        lines.append("  no name here holds a value the analysis followed, and nothing here changes a tensor in place")
    elif not explanation.changes:
        lines.append("  no in-place change of a tensor here")
    return "\n".join(lines) + "\n"


def _value_lines(facts: NameFacts) -> list[str]:
    value = facts.value
    summary = f"a tensor, {value.summary}" if value.kind == "tensor" else value.summary
    return [f"  `{facts.name}` (column {facts.column}): {summary}", *(f"    - {note}" for note in value.notes)]


def _change_lines(change: ChangeFacts) -> list[str]:
    target = f" of `{change.target}`" if change.target else ""
    lines = [f"  in-place change (column {change.column}): {change.verb}{target}", f"    - {_GRAD[change.grad_enabled]}"]
    if change.assumes:
        lines.append(f"    - on a branch the default of `{change.assumes}` skips: it runs when a caller passes another value")
    if change.called_from:
        lines.append(f"    - in the code the call at {', then the call at '.join(change.called_from)} ran")
    lines += [f"    - meets a save: its {s.what} by `{s.saved_by}` ({s.at}){'' if s.certain else ' (not certain)'}"
              for s in change.saved]
    if not change.saved:
        lines.append("    - meets no live save" + (f" (a backward pass freed them: {change.freed_by})"
                                                    if change.freed_by else ""))
    backward = _BACKWARD[change.backward_follows] if change.backward_follows != "maybe" or not change.backward_at \
        else "a backward pass may run through what it changes (it reaches it through a call the analysis did not follow)"
    if change.dies_in is not None:
        backward = f"no backward pass can run through what it changes: its graph dies when `{change.dies_in}` returns"
    lines.append(f"    - {backward}" + (f": {change.backward_at}" if change.backward_at else ""))
    for verdict in change.verdicts:
        if verdict.reported:
            lines.append(f"    {verdict.code} reported [{verdict.severity}]: {verdict.message}")
        else:
            lines.append(f"    {verdict.code} not reported: {verdict.message}")
    return lines
