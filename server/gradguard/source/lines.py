"""Where lines end: at \\n, \\r\\n and \\r only, as Python and LSP end them (`str.splitlines` also
splits at form feeds, U+2028 and other separators, which are inside a line for both)."""

from __future__ import annotations

import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_FIRST_NEWLINE = re.compile(r"\r\n?|\n")


def lines_of(text: str) -> list[str]:
    """The lines of `text` with their ends, split where Python and LSP split them: at \\n, \\r\\n
    and \\r only (`str.splitlines` also splits at form feeds and other separators)."""
    if text.count("\r") != text.count("\r\n"):
        return _LINE.findall(text)
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def newline_of(text: str) -> str:
    """The line ending of `text`'s first line (libcst's rule), `\\n` if it has none."""
    match = _FIRST_NEWLINE.search(text)
    return match.group() if match else "\n"
