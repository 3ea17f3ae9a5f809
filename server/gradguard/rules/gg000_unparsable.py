"""A file, or part of one, that gradguard could not analyse.

## What it does
Reports a file gradguard could not read (permissions, encoding) or parse (a syntax error), at
the position of the error, as an error: nothing else is checked in that file (the editor
integration keeps checking the parts of an open document that do parse).

Reports, as information, what gradguard chose not to analyse to stay fast: a file over
2,000,000 characters, and each function whose analysis spent its budget (abstract steps and
CPU time, see `analysis/budget.py`). Past the budget, the analysis stops following that call
or function and says so once, at its definition; the rest of the file keeps its findings. A
cut never causes a finding: what the cut code would have done is unknown, and unknown values
conclude nothing.

## Why is this bad?
A file that is not analysed gets no other diagnostics: silence would look like a clean bill.

## Example
```python
def forward(self, x)   # GG000: expected ':'
```

## Fix safety
No fix: correct the syntax. A budget note needs no change to the code; splitting a huge
function or generated expression lets gradguard analyse it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from gradguard.analysis import budget
from gradguard.analysis.events import Cut
from gradguard.analysis.user_calls import MAX_FOLLOWED_CALLS
from gradguard.findings import Finding, Position, Severity, Span
from gradguard.rules.base import RuleContext
from gradguard.source.parser import MAX_CHAIN, long_chains
from gradguard.source.syntax import position_at

CODE = "GG000"
NAME = "unparsable-file"

_WHY = {
    "steps": "it took more than its budget of {steps:,} steps",
    "time": f"the file took more than its budget of {budget.FILE_CPU_SECONDS:g} s of CPU time",
    "depth": "its calls or expressions are nested too deeply",
    "calls": f"it followed {MAX_FOLLOWED_CALLS} calls",
}
_STEPS = {"call": budget.CALL_STEPS, "function": budget.FUNCTION_STEPS, "file": budget.FILE_STEPS}


def check(context: RuleContext) -> Iterator[Finding]:
    problem = context.document.syntax_problem
    if problem is not None:
        end = Position(problem.position.line, problem.position.column + 1)
        if problem.skipped:
            yield Finding(CODE, Severity.INFO, f"gradguard skips this file: {problem.message}",
                          context.document.filename, Span(problem.position, end))
            return
        if problem.unreadable:
            message = f"gradguard could not read this file: {problem.message}"
        elif context.document.stale_lines:
            stale = context.document.stale_lines
            skipped = f"line {stale[0][0]} until it parses" if len(stale) == 1 and stale[0][0] == stale[0][1] else \
                "lines " + ", ".join(f"{a}–{b}" if a != b else str(a) for a, b in stale) + " until they parse"
            message = f"{problem.message}: gradguard skips {skipped}; the rest of the file is analysed"
        else:
            message = f"gradguard could not analyse this file: {problem.message}"
        yield Finding(CODE, Severity.ERROR, message, context.document.filename, Span(problem.position, end))
    stopped = {cut.function for cut in context.cuts if cut.scope == "function"}
    for cut in context.cuts:
        if cut.scope == "call" and cut.function in stopped and cut.node is getattr(cut.function, "name", None):
            continue  # one note at the definition: its own analysis says it stopped too
        yield _note(context, cut, followed=cut.scope == "function" and any(
            c.scope == "call" and c.function is cut.function for c in context.cuts))
    for start, end in long_chains(context.document.text):
        at = position_at(context.document.text, start)
        yield Finding(CODE, Severity.INFO, f"gradguard skipped this expression of {end - start:,} characters: "
                      f"a flat chain of more than {MAX_CHAIN:,} operators; what it computes is not known",
                      context.document.filename, Span(at, Position(at.line, at.column + 1)))


def _note(context: RuleContext, cut: Cut, followed: bool = False) -> Finding:
    why = _WHY[cut.reason].format(steps=_STEPS.get(cut.scope, 0))
    name = f"`{cut.function.name.value}`" if cut.function is not None else "the module-level code"
    if cut.scope == "imports":
        files = ", ".join(f"`{Path(f).name}`" for f in cut.skipped[:5]) + (
            f" and {len(cut.skipped) - 5} more" if len(cut.skipped) > 5 else "")
        message = (f"gradguard stopped reading imported files after {budget.IMPORT_STEPS:,} steps: "
                   f"what {files} define is not known, so findings that depend on it may be missing")
    elif cut.scope == "statement":
        message = f"gradguard skipped this line: {why}; what it binds is not known from here on"
    elif cut.scope == "calls":
        message = (f"gradguard stopped following calls made by {name}: {why}; what later calls do to its tensors "
                   "is not known, so findings that depend on it may be missing")
    elif cut.scope == "call":
        message = (f"gradguard stopped following calls of {name}: {why}; what they do to their callers' tensors "
                   "is not known, so findings that depend on it may be missing")
    elif cut.scope == "function":
        message = f"gradguard stopped analysing {name} part-way: {why}; findings after that point in it may be missing"
        if followed:
            message += ", and calls of it are not followed"
    else:
        names = ", ".join(f"`{n}`" for n in cut.skipped[:5]) + (f" and {len(cut.skipped) - 5} more"
                                                                if len(cut.skipped) > 5 else "")
        left = f": {len(cut.skipped)} function{'s' if len(cut.skipped) != 1 else ''} not analysed ({names})" \
            if cut.skipped else ""
        message = f"gradguard stopped analysing this file: {why}{left}"
    span = Span(Position(1, 0), Position(1, 0))
    if cut.node is not None:
        span = context.document.span(cut.node, cut.function)
        span = Span(span.start, span.end if span.end.line == span.start.line else span.start)
    return Finding(CODE, Severity.INFO, message, context.document.filename, span)
