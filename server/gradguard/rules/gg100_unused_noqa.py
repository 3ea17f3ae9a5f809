"""A `# noqa: CODE` comment that silences nothing: no finding of that gradguard code on its line.

## What it does
Reports, as Ruff's RUF100 does, each gradguard code in a `# noqa: ...` comment whose line has no
finding of that code: the code is unused (the problem it silenced was fixed, or the line moved),
non-enabled (its rule is not selected for the file, so the comment has nothing to silence) or
unknown (no rule has it). Only gradguard's own codes (`GG...`) are judged: the codes of other
linters (`E501`, `F401`) and a bare `# noqa`, which every linter reads, are left to those linters.

It is off unless selected, as RUF100 is: `--extend-select GG100`, `select = ["GG0", "GG100"]` in
`[tool.gradguard]`, or `--select ALL`.

## Why is this bad?
A stale `# noqa: GG001` hides the next real problem on that line: an in-place change added there
later would go unreported, and the next reader takes the comment for a known, accepted risk.

## Example
```python
y = torch.sigmoid(x)
y = y * 2  # noqa: GG001
```

Use instead:
```python
y = torch.sigmoid(x)
y = y * 2
```

## Fix safety
The fix removes the unused codes from the comment, or the whole `# noqa` directive when none of
its codes is left; it is safe: a comment changes nothing the code computes.
"""

from __future__ import annotations

import re
from typing import Iterator

from gradguard.config import known_codes
from gradguard.findings import Applicability, Edit, Finding, Fix, Position, Severity, Span
from gradguard.fixes.noqa import comments, noqa_codes
from gradguard.rules.base import RuleContext

CODE = "GG100"
NAME = "unused-noqa"
OWN_PREFIX = "GG"  # the codes this rule judges: gradguard's


def check(context: RuleContext) -> Iterator[Finding]:
    if context.document.module is None:
        return  # a file that does not parse: its findings are not known, nor which codes they use
    known = known_codes()
    found: dict[int, set[str]] = {}
    for finding in context.reported:
        found.setdefault(finding.span.start.line, set()).add(finding.code)
    for line, column, comment in comments(context.document.text):
        directive = noqa_codes(comment)
        if directive is None:
            continue
        match, codes = directive
        kinds = {code: _kind(context, code, known) for code in codes
                 if code.upper().startswith(OWN_PREFIX) and code.upper() not in found.get(line, ())}
        if not kinds:
            continue
        text = context.document.line_text(line)
        span = Span(Position(line, column + match.start()), Position(line, column + match.end()))
        yield Finding(CODE, Severity.WARNING, _message(kinds), context.document.filename, span,
                      fixes=(Fix(_fix_message(kinds, codes), Applicability.SAFE,
                                 (_removal(text, line, column, comment, match, codes, set(kinds)),)),))


def _kind(context: RuleContext, code: str, known: tuple[str, ...]) -> str:
    """Why a code on a line without its finding is there for nothing."""
    if code.upper() not in known:
        return "unknown"
    return "unused" if context.selected(code.upper()) else "non-enabled"


def _message(kinds: dict[str, str]) -> str:
    """Ruff's words: "Unused `noqa` directive (unused: `GG001`; non-enabled: `GG004`)"."""
    parts = [f"{kind}: {', '.join(f'`{code}`' for code, k in kinds.items() if k == kind)}"
             for kind in ("unused", "non-enabled", "unknown") if kind in kinds.values()]
    return f"Unused `noqa` directive ({'; '.join(parts)})"


def _fix_message(kinds: dict[str, str], codes: list[str]) -> str:
    if len(kinds) == len(codes):
        return "Remove unused `noqa` directive"
    return f"Remove unused {', '.join(f'`{code}`' for code in kinds)} from the `noqa` directive"


def _removal(text: str, line: int, column: int, comment: str, match: re.Match[str], codes: list[str],
             unused: set[str]) -> Edit:
    """The edit that drops the `unused` codes; the whole directive when none is left (with the
    spaces before the comment when the comment was nothing else)."""
    kept = [code for code in codes if code not in unused]
    if kept:
        start, end = column + match.start("codes"), column + match.end("codes")
        return Edit(Span(Position(line, start), Position(line, end)), ", ".join(kept))
    rest = comment[match.end():]
    if comment[:match.start()].strip() or rest.strip():
        start, end = column + match.start(), column + match.end()
        return Edit(Span(Position(line, start), Position(line, end)), "" if match.start() else "#")
    start = len(text[:column].rstrip())
    return Edit(Span(Position(line, start), Position(line, column + len(comment))), "")
