"""Output formats of `gradguard check`: text lines and JSON."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

from gradguard import __version__
from gradguard.findings import Finding, Position, Span
from gradguard.rules import RULES, RULES_BY_CODE
from gradguard.source.document import lines_of


def _location(position: Position) -> dict[str, int]:
    return {"row": position.line, "column": position.column + 1}


def finding_to_json(finding: Finding) -> dict:
    """One finding in the JSON shape: 1-based rows and code-point columns, absolute paths."""
    rule = RULES_BY_CODE.get(finding.code)
    fix = finding.fixes[0] if finding.fixes else None  # the preferred one: rules list safe fixes first
    return {
        "code": finding.code,
        "severity": finding.severity.value,
        "message": finding.message,
        "filename": str(Path(os.path.abspath(finding.filename))),
        "location": _location(finding.span.start),
        "end_location": _location(finding.span.end),
        "related": [
            {"filename": str(Path(os.path.abspath(r.filename))), "location": _location(r.span.start), "message": r.message}
            for r in finding.related
        ],
        "fix": None if fix is None else {
            "message": fix.message,
            "applicability": fix.applicability.value,
            "edits": [{"content": e.content, "location": _location(e.span.start),
                       "end_location": _location(e.span.end)} for e in fix.edits],
        },
        "url": rule.url if rule is not None else None,
    }


def render_json(findings: list[Finding]) -> str:
    return json.dumps([finding_to_json(f) for f in findings], indent=2, ensure_ascii=False)


def render_text(findings: list[Finding]) -> str:
    """`path:line:col: CODE message`, then the related locations indented."""
    lines = []
    for finding in findings:
        start = finding.span.start
        lines.append(f"{finding.filename}:{start.line}:{start.column + 1}: {finding.code} "
                     f"[{finding.severity.value}] {finding.message}")
        for related in finding.related:
            lines.append(f"    {related.filename}:{related.span.start.line}:{related.span.start.column + 1}: "
                         f"{related.message}")
    return "\n".join(lines)


_SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _region(span: Span) -> dict[str, int]:
    return {"startLine": span.start.line, "startColumn": span.start.column + 1,
            "endLine": span.end.line, "endColumn": span.end.column + 1}


def _physical(filename: str, span: Span) -> dict:
    return {"physicalLocation": {"artifactLocation": {"uri": Path(os.path.abspath(filename)).as_uri()},
                                 "region": _region(span)}}


def render_sarif(findings: list[Finding]) -> str:
    """SARIF 2.1.0, columns in Unicode code points, every rule with its documentation."""
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
                                "informationUri": "https://github.com/gradguard/gradguard", "rules": rules}},
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
        f"title={_escape_property(f.code)}::{_escape_data(f'{f.code} {f.message}')}"
        for f in findings)


RENDERERS = {"text": render_text, "json": render_json, "sarif": render_sarif, "github": render_github}


def unified_diff(filename: str, before: str, after: str) -> str:
    """`--diff`: the unified diff of `before` and `after`, both named `filename`."""
    return "".join(difflib.unified_diff(lines_of(before), lines_of(after),
                                        fromfile=filename, tofile=filename))
