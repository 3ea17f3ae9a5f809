"""The fix loop: which fix each finding gets, which edits go together, pass after pass.

Used by `gradguard check --fix`/`--diff` and by the editor's "fix all" alike. The rules decide
whether a fix is offered and how safe it is; this module only chooses among them: the first
safe fix of each finding (any fix with `unsafe`), never two edits that overlap, then the text
is analysed again, since one fix can make another finding's edits stale.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable

from gradguard.findings import Applicability, Edit, Finding, Fix
from gradguard.fixes.edits import apply_edits
from gradguard.source.lines import newline_of

MAX_PASSES = 5


@dataclass
class FixedText:
    """A text after fixing: the new text, how many findings of each code were fixed, and what is left."""

    text: str
    fixed_codes: Counter[str]
    remaining: list[Finding]

    @property
    def fixed(self) -> int:
        return sum(self.fixed_codes.values())


def chosen_fix(finding: Finding, unsafe: bool) -> Fix | None:
    """The fix applied for `finding`: its first safe one (or its first, with `unsafe`)."""
    return next((f for f in finding.fixes if unsafe or f.applicability is Applicability.SAFE), None)


def non_overlapping(fixes: list[Fix]) -> list[Edit]:
    """The edits of `fixes`, in order, leaving out each fix one of whose edits overlaps one taken."""
    taken: list[Edit] = []
    for fix in fixes:
        if not any(_overlap(e, t) for e in fix.edits for t in taken):
            taken.extend(fix.edits)
    return taken


def _overlap(a: Edit, b: Edit) -> bool:
    if a.span.start == a.span.end == b.span.start == b.span.end:
        return True  # two insertions at one point: their order would be a guess
    return a.span.start < b.span.end and b.span.start < a.span.end


_BARE_NEWLINE = re.compile(r"(?<!\r)\n")


def in_line_endings(edits: list[Edit], newline: str) -> list[Edit]:
    """`edits` whose inserted lines end as the file's lines do (`\r\n`, `\r`)."""
    if newline == "\n":
        return edits
    return [replace(e, content=_BARE_NEWLINE.sub(newline, e.content)) for e in edits]


def fix_text(text: str, analyse: Callable[[str], list[Finding]], unsafe: bool,
             apply: Callable[[str, list[Edit]], str] = apply_edits) -> FixedText:
    """Apply the chosen fixes of `analyse(text)`'s findings, pass after pass, until none is
    left to apply (at most `MAX_PASSES`); a pass that removes no finding is dropped, and ends the
    loop. Inserted lines take the text's line ending. `apply` makes the next text from the edits (a
    notebook's applies them in its cells)."""
    fixed: Counter[str] = Counter()
    findings = analyse(text)
    newline = newline_of(text)
    for _ in range(MAX_PASSES):
        edits = non_overlapping([fix for finding in findings if (fix := chosen_fix(finding, unsafe)) is not None])
        if not edits:
            break
        new_text = apply(text, in_line_endings(edits, newline))
        new_findings = analyse(new_text)
        removed = Counter(f.code for f in findings) - Counter(f.code for f in new_findings)
        if not removed:  # the edits did not help (a rule offered a fix that is wrong here): keep the text
            break
        fixed += removed
        text, findings = new_text, new_findings
    return FixedText(text, fixed, findings)
