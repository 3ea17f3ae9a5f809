"""The text formats of `gradguard check`, as Ruff prints them.

`full` (the default): each finding's line, then its source line with a caret under its range and
the line that explains it (the op that saved the tensor) underlined with its note, then its fix.
`concise`: the first line only. `[*]` marks a finding that `--fix` fixes. Colour on a terminal;
`NO_COLOR` turns it off and `FORCE_COLOR` on (https://no-color.org).
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from gradguard.findings import Applicability, Finding, Related, Severity, Span
from gradguard.source.lines import lines_of

TYPE_CHECKING = False  # typing is not imported for annotations: a run the cache answers never needs it
if TYPE_CHECKING:
    from typing import TextIO

_SEVERITY_COLOURS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}


def use_colour(stream: TextIO) -> bool:
    """Whether to colour what goes to `stream`."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty() and os.environ.get("TERM") != "dumb"


@dataclass(frozen=True)
class Style:
    """ANSI colours, or none."""

    colour: bool

    def paint(self, text: str, *codes: str) -> str:
        return f"\x1b[{';'.join(codes)}m{text}\x1b[0m" if self.colour and codes and text else text


def has_safe_fix(finding: Finding) -> bool:
    return any(f.applicability is Applicability.SAFE for f in finding.fixes)


def cell_key(filename: str, cell: int | None) -> str:
    """The key of a notebook cell's text among a run's sources (a file's own text: its name)."""
    return filename if cell is None else f"{filename}\0cell {cell}"


def place(filename: str, span: Span) -> str:
    """`path:line:col`, `nb.ipynb:cell 3:line:col` in a notebook (1-based columns)."""
    cell = f"cell {span.cell}:" if span.cell is not None else ""
    return f"{filename}:{cell}{span.start.line}:{span.start.column + 1}"


def header(finding: Finding, style: Style) -> str:
    """`path:line:col: CODE [severity] [*] message` (`path:cell N:line:col` in a notebook)."""
    where = style.paint(place(finding.filename, finding.span) + ":", "1")
    code = style.paint(finding.code, "1", _SEVERITY_COLOURS[finding.severity])
    fixable = f" {style.paint('[*]', '36')}" if has_safe_fix(finding) else ""
    return f"{where} {code} [{finding.severity.value}]{fixable} {finding.message}"


def render_concise(findings: list[Finding], sources: Mapping[str, str], style: Style) -> str:
    return "\n".join(header(f, style) for f in findings)


def render_full(findings: list[Finding], sources: Mapping[str, str], style: Style) -> str:
    """Each finding with its source lines (when `sources` holds its file's text) and its fix."""
    blocks = []
    for finding in findings:
        lines = [header(finding, style)]
        text = sources.get(cell_key(finding.filename, finding.span.cell))
        if text is not None:
            lines += _snippet(finding, lines_of(text), style)
        lines += [f"  = note: {place(r.filename, r.span)}: {r.message}"
                  for r in finding.related if not _same_text(r, finding) or text is None]
        if finding.fixes:
            fix = finding.fixes[0]
            unsafe = " (unsafe: it may change what the code computes; --unsafe-fixes applies it)" \
                if fix.applicability is Applicability.UNSAFE else ""
            lines.append(f"  = {style.paint('help', '1', '36')}: {fix.message}{unsafe}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _same_text(related: Related, finding: Finding) -> bool:
    """Whether `related` lies in the text `finding`'s snippet shows (its file, its cell)."""
    return related.filename == finding.filename and related.span.cell == finding.span.cell


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in text)


def _snippet(finding: Finding, lines: list[str], style: Style) -> list[str]:
    """The finding's line (carets) and its related lines in the same file (dashes), in line order."""
    marks = [(finding.span, "^", finding.code, _SEVERITY_COLOURS[finding.severity])]
    marks += [(r.span, "-", r.message, "34") for r in finding.related if _same_text(r, finding)]
    marks = [m for m in marks if 0 < m[0].start.line <= len(lines)]
    if not marks:
        return []
    shown = sorted({span.start.line for span, *_ in marks})
    gutter = len(str(shown[-1]))
    bar = style.paint(" " * gutter + " |", "34")
    out = [bar]
    previous = None
    for number in shown:
        if previous is not None and number > previous + 1:
            out.append(style.paint("...", "34"))
        source = lines[number - 1].rstrip("\r\n")
        out.append(f"{style.paint(str(number).rjust(gutter) + ' |', '34')} {source}")
        for span, char, label, colour in (m for m in marks if m[0].start.line == number):
            start = min(span.start.column, len(source))
            end = span.end.column if span.end.line == number else len(source)
            end = max(min(end, len(source)), start)
            pad = "".join("\t" if c == "\t" else " " * _width(c) for c in source[:start])
            underline = char * max(_width(source[start:end]), 1)
            out.append(f"{bar} {pad}{style.paint(underline + ' ' + label, colour)}")
        previous = number
    out.append(bar)
    return out
