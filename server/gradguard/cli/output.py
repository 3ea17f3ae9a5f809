"""The machine-readable output formats of `gradguard check` (JSON, JSON lines, SARIF, GitHub
annotations) and `--diff`'s unified diff; the text formats are in `text.py`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from gradguard import REPOSITORY, __version__, rule_url
from gradguard.config import known_codes
from gradguard.findings import Finding, Position, Span
from gradguard.source.lines import lines_of

TYPE_CHECKING = False  # annotations only: a run the cache answers never reads a notebook
if TYPE_CHECKING:
    from gradguard.source.notebook import Notebook


def _location(position: Position) -> dict[str, int]:
    return {"row": position.line, "column": position.column + 1}


def finding_to_json(finding: Finding) -> dict:
    """One finding in the JSON shape: 1-based rows and code-point columns, absolute paths."""
    fix = finding.fixes[0] if finding.fixes else None  # the preferred one: rules list safe fixes first
    return {
        "code": finding.code,
        "severity": finding.severity.value,
        "message": finding.message,
        "filename": str(Path(os.path.abspath(finding.filename))),
        "cell": finding.span.cell,
        "location": _location(finding.span.start),
        "end_location": _location(finding.span.end),
        "related": [
            {"filename": str(Path(os.path.abspath(r.filename))), "cell": r.span.cell, "location": _location(r.span.start),
             "message": r.message}
            for r in finding.related
        ],
        "fix": None if fix is None else {
            "message": fix.message,
            "applicability": fix.applicability.value,
            "edits": [{"content": e.content, "cell": e.span.cell, "location": _location(e.span.start),
                       "end_location": _location(e.span.end)} for e in fix.edits],
        },
        "url": rule_url(finding.code) if finding.code in known_codes() else None,
        "aten_op": finding.aten_op,
    }


def render_json(findings: list[Finding]) -> str:
    return json.dumps([finding_to_json(f) for f in findings], indent=2, ensure_ascii=False)


def render_json_lines(findings: list[Finding]) -> str:
    """One JSON object per line (`--output-format json-lines`)."""
    return "\n".join(json.dumps(finding_to_json(f), ensure_ascii=False) for f in findings)


_SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _region(span: Span) -> dict[str, int]:
    return {"startLine": span.start.line, "startColumn": span.start.column + 1,
            "endLine": span.end.line, "endColumn": span.end.column + 1}


def _physical(filename: str, span: Span) -> dict:
    """A SARIF location; in a notebook, its region is in the cell the `cell` property names."""
    location: dict = {"physicalLocation": {"artifactLocation": {"uri": Path(os.path.abspath(filename)).as_uri()},
                                           "region": _region(span)}}
    if span.cell is not None:
        location["properties"] = {"cell": span.cell}
    return location


def render_sarif(findings: list[Finding]) -> str:
    """SARIF 2.1.0, columns in Unicode code points, every rule with its documentation."""
    from gradguard.rules import RULES  # the rules' documentation: only SARIF carries it

    rules = [{
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.summary},
        "help": {"text": rule.documentation, "markdown": rule.documentation},
        "helpUri": rule.url,
    } for rule in RULES]
    results = [{
        "ruleId": f.code,
        "ruleIndex": [r.code for r in RULES].index(f.code),
        "level": _SARIF_LEVELS[f.severity.value],
        "message": {"text": f.message},
        "locations": [_physical(f.filename, f.span)],
        "relatedLocations": [{"id": i, "message": {"text": r.message}, **_physical(r.filename, r.span)}
                             for i, r in enumerate(f.related)],
    } for f in findings]
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "gradguard", "version": __version__,
                                "informationUri": REPOSITORY, "rules": rules}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(log, indent=2, ensure_ascii=False)


def _escape_property(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A").replace(":", "%3A").replace(",", "%2C")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def render_github(findings: list[Finding]) -> str:
    """GitHub Actions workflow commands: one annotation per finding."""
    kinds = {"error": "error", "warning": "warning", "info": "notice"}
    return "\n".join(
        f"::{kinds[f.severity.value]} file={_escape_property(f.filename)},line={f.span.start.line},"
        f"col={f.span.start.column + 1},endLine={f.span.end.line},endColumn={f.span.end.column + 1},"
        f"title={_escape_property(f.code)}::{_escape_data(_cell_prefix(f) + f'{f.code} {f.message}')}"
        for f in findings)


def _cell_prefix(finding: Finding) -> str:
    """GitHub places an annotation by file lines: in a notebook, the message names the cell."""
    return f"cell {finding.span.cell}: " if finding.span.cell is not None else ""


MACHINE_RENDERERS = {"json": render_json, "json-lines": render_json_lines, "sarif": render_sarif,
                     "github": render_github}


def unified_diff(filename: str, before: str, after: str) -> str:
    """`--diff`: the unified diff of `before` and `after`, both named `filename`."""
    import difflib

    return "".join(difflib.unified_diff(lines_of(before), lines_of(after),
                                        fromfile=filename, tofile=filename))


def cell_diffs(filename: str, before: Notebook, after: Notebook) -> list[str]:
    """`--diff` of a notebook: one unified diff per changed cell, named `nb.ipynb:cell 3` (as Ruff's)."""
    return [unified_diff(f"{filename}:cell {old.number}", old.source, new.source)
            for old, new in zip(before.cells, after.cells) if old.source != new.source]
