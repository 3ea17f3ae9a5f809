"""What the user sees of each rule, reviewed as text, in the manner of Ruff's snapshot tests.

For every rule, `tests/snapshots/<CODE>.txt` holds each of its findings on the repository's labelled
cases and programs (`tests/cases/`, `tests/programs/`, each proven by running torch in
`tests/test_cases.py`), on the files gradguard cannot analyse whole (`tests/fixtures/gg000/`) and on
`# noqa` comments that silence nothing (`tests/fixtures/gg100/`): the code, severity, range and
message, each related location, and each fix with its applicability as the diff it makes. A change
of wording, range or edit shows up in review as a diff of these files. After a deliberate change,
rewrite them with `GRADGUARD_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_snapshots.py` and review
the diff.
"""

from __future__ import annotations

import difflib
import os
from functools import cache

import pytest

from gradguard.config import Settings
from gradguard.engine import analyse_document, project_index
from gradguard.findings import Finding, Span
from gradguard.fixes.edits import apply_edits
from gradguard.rules import RULES
from gradguard.source.document import Document

from helpers import ROOT

SNAPSHOTS = ROOT / "tests" / "snapshots"
FIXTURES = [*sorted((ROOT / "tests" / "cases").glob("*.py")), *sorted((ROOT / "tests" / "programs").glob("*.py")),
            *sorted((ROOT / "tests" / "fixtures" / "gg000").glob("*.py")),
            *sorted((ROOT / "tests" / "fixtures" / "gg100").glob("*.py"))]
EVERY_RULE = Settings(select=("GG",))  # GG100 included, which is off unless selected


def _place(filename: str, span: Span) -> str:
    """`file:line:column-line:column`, columns 1-based as editors and the CLI show them."""
    name = os.path.relpath(filename, ROOT) if os.path.isabs(filename) else filename
    return f"{name}:{span.start.line}:{span.start.column + 1}-{span.end.line}:{span.end.column + 1}"


def _render(finding: Finding, text: str) -> str:
    lines = [f"{finding.code} [{finding.severity.value}] {_place(finding.filename, finding.span)}",
             f"  {finding.message}"]
    lines += [f"  related {_place(r.filename, r.span)}: {r.message}" for r in finding.related]
    for fix in finding.fixes:
        lines.append(f"  fix [{fix.applicability.value}] {fix.message}")
        fixed = apply_edits(text, list(fix.edits))
        diff = difflib.unified_diff(text.splitlines(), fixed.splitlines(), n=0, lineterm="")
        lines += [f"    {line}" for line in list(diff)[2:]]
    return "\n".join(lines)


@cache
def _findings() -> dict[str, list[str]]:
    """Per rule code: every finding on the fixtures, rendered, in file order."""
    rendered: dict[str, list[str]] = {rule.code: [] for rule in RULES}
    project = project_index(use_jedi=False)
    for path in FIXTURES:
        text = path.read_text(encoding="utf-8")
        for finding in analyse_document(Document.parse(str(path), text), EVERY_RULE, project):
            rendered[finding.code].append(_render(finding, text))
    return rendered


def _snapshot(code: str) -> str:
    entries = _findings()[code]
    header = f"# {code}: what `gradguard check` reports on the fixtures of tests/test_snapshots.py ({len(entries)} findings)\n"
    return header + "".join(f"\n{entry}\n" for entry in entries)


@pytest.mark.parametrize("code", [rule.code for rule in RULES])
def test_rule_snapshot(code: str) -> None:
    path = SNAPSHOTS / f"{code}.txt"
    current = _snapshot(code)
    if os.environ.get("GRADGUARD_UPDATE_SNAPSHOTS") == "1":
        path.write_text(current, encoding="utf-8")
    assert path.is_file(), f"no snapshot for {code}: run with GRADGUARD_UPDATE_SNAPSHOTS=1 and review it"
    expected = path.read_text(encoding="utf-8")
    if current != expected:
        diff = "\n".join(difflib.unified_diff(expected.splitlines(), current.splitlines(), f"{path.name} (snapshot)",
                                              f"{path.name} (now)", lineterm=""))
        pytest.fail(f"{code}'s findings changed; review, then update with GRADGUARD_UPDATE_SNAPSHOTS=1:\n{diff}")


def test_every_rule_has_findings_in_its_snapshot() -> None:
    assert all(_findings()[rule.code] for rule in RULES), [r.code for r in RULES if not _findings()[r.code]]
