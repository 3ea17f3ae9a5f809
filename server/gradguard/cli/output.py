"""Output formats of `gradguard check`: text lines and JSON."""

from __future__ import annotations

import json
from pathlib import Path

from gradguard.findings import Finding, Position
from gradguard.rules import RULES_BY_CODE


def _location(position: Position) -> dict[str, int]:
    return {"row": position.line, "column": position.column + 1}


def finding_to_json(finding: Finding) -> dict:
    """One finding in the JSON shape: 1-based rows and code-point columns, absolute paths."""
    rule = RULES_BY_CODE.get(finding.code)
    fix = finding.fixes[0] if finding.fixes else None
    return {
        "code": finding.code,
        "severity": finding.severity.value,
        "message": finding.message,
        "filename": str(Path(finding.filename).resolve()),
        "location": _location(finding.span.start),
        "end_location": _location(finding.span.end),
        "related": [
            {"filename": str(Path(r.filename).resolve()), "location": _location(r.span.start), "message": r.message}
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
