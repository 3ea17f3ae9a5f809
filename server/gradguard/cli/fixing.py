"""`--fix` / `--diff`: apply the fixes the rules offer, until none is left to apply."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from gradguard.analysis.project import ProjectIndex
from gradguard.config import Settings
from gradguard.engine import analyse_document
from gradguard.findings import Applicability, Edit, Finding, Fix
from gradguard.fixes.edits import apply_edits
from gradguard.source.document import Document

_MAX_PASSES = 5


@dataclass
class FixedFile:
    """A file after fixing: its new text, how many findings were fixed, and what is left."""

    text: str
    fixed: int
    remaining: list[Finding]


def chosen_fix(finding: Finding, unsafe: bool) -> Fix | None:
    """The fix `--fix` applies for `finding`: the first safe one (or any, with `--unsafe-fixes`)."""
    return next((f for f in finding.fixes if unsafe or f.applicability is Applicability.SAFE), None)


def _non_overlapping(fixes: list[Fix]) -> list[Edit]:
    taken: list[Edit] = []
    for fix in fixes:
        if not any(_overlap(e, t) for e in fix.edits for t in taken):
            taken.extend(fix.edits)
    return taken


def _overlap(a: Edit, b: Edit) -> bool:
    if a.span.start == a.span.end == b.span.start == b.span.end:
        return True
    return a.span.start < b.span.end and b.span.start < a.span.end


def fix_file(filename: str, text: str, settings: Settings, project: ProjectIndex | None, unsafe: bool) -> FixedFile:
    """Apply fixes to `text` pass after pass (a fix can make another finding's edits stale)."""
    fixed = 0
    findings = analyse_document(Document.parse(filename, text), settings, project)
    for _ in range(_MAX_PASSES):
        fixes = [fix for finding in findings if (fix := chosen_fix(finding, unsafe)) is not None]
        edits = _non_overlapping(fixes)
        if not edits:
            break
        new_text = apply_edits(text, edits)
        new_findings = analyse_document(Document.parse(filename, new_text), settings, project)
        fixed += max(len(findings) - len(new_findings), 0)
        text, findings = new_text, new_findings
    return FixedFile(text, fixed, findings)


def unified_diff(filename: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=filename, tofile=filename))
