"""A file that cannot be read or parsed.

## What it does
Reports a file gradguard could not read (permissions, encoding) or parse (a syntax error), at
the position of the error. Nothing else is checked in that file (the editor integration keeps
checking the parts of an open document that do parse).

## Why is this bad?
A file that is not analysed gets no other diagnostics: silence would look like a clean bill.

## Example
```python
def forward(self, x)   # GG000: expected ':'
```

## Fix safety
No fix: correct the syntax.
"""

from __future__ import annotations

from typing import Iterator

from gradguard.findings import Finding, Position, Severity, Span
from gradguard.rules.base import RuleContext

CODE = "GG000"
NAME = "unparsable-file"


def check(context: RuleContext) -> Iterator[Finding]:
    problem = context.document.syntax_problem
    if problem is None:
        return
    end = Position(problem.position.line, problem.position.column + 1)
    if context.document.stale_lines:
        skipped = ", ".join(f"{a}–{b}" if a != b else str(a) for a, b in context.document.stale_lines)
        message = f"{problem.message}: gradguard skips lines {skipped} until they parse; the rest of the file is analysed"
    else:
        message = f"gradguard could not analyse this file: {problem.message}"
    yield Finding(CODE, Severity.ERROR, message, context.document.filename, Span(problem.position, end))
