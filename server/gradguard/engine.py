"""From text to findings: parse, interpret, run the rules, apply settings and `# noqa`."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import replace

from gradguard.analysis.interpreter import interpret
from gradguard.analysis.project import ProjectIndex
from gradguard.config import Settings
from gradguard.findings import Finding, Position, Severity
from gradguard.rules import RULES, RuleContext
from gradguard.source.document import Document, SyntaxProblem

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def _comment(line: str) -> str:
    """The comment of one source line (a `#` inside a string literal does not start one)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            if token.type == tokenize.COMMENT:
                return token.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return ""


def suppressed(line: str, code: str) -> bool:
    """Whether `# noqa` or `# noqa: CODE` in `line`'s comment silences `code`."""
    if "noqa" not in line.lower():
        return False
    match = _NOQA.search(_comment(line))
    if match is None:
        return False
    codes = match.group("codes")
    return codes is None or code.upper() in {c.upper() for c in re.split(r"[\s,]+", codes)}


def analyse_document(document: Document, settings: Settings, project: ProjectIndex | None = None) -> list[Finding]:
    """Every finding of the enabled rules in `document`, sorted by position.

    `project` resolves names imported from other files of the project (one per run or server).
    """
    changes = []
    if document.module is not None:
        try:
            result = interpret(document.module, document.filename, project)
            changes = result.changes
            if project is not None and result.definitions is not None:
                project.register(document.filename, document.text, result.definitions)
        except RecursionError:
            document = replace(document, module=None, syntax_problem=SyntaxProblem(
                "expressions are nested too deeply to analyse", Position(1, 0)))
    context = RuleContext(document, changes, project)
    best: dict[tuple[str, int, int], Finding] = {}
    for rule in RULES:
        if not settings.enabled(rule.code, document.filename):
            continue
        for finding in rule.check(context):
            finding = _with_severity(finding, settings.severity(rule.code, finding.severity))
            key = (finding.code, finding.span.start.line, finding.span.start.column)
            if key not in best or _RANK[finding.severity] < _RANK[best[key].severity]:
                best[key] = finding
    findings = [f for f in best.values() if not suppressed(document.line_text(f.span.start.line), f.code)]
    return sorted(findings, key=lambda f: (f.span.start, f.code))


def analyse_text(filename: str, text: str, settings: Settings) -> list[Finding]:
    """Parse and analyse one file's text."""
    return analyse_document(Document.parse(filename, text), settings)


def _with_severity(finding: Finding, severity: Severity) -> Finding:
    return finding if finding.severity is severity else replace(finding, severity=severity)
