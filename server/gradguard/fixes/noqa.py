"""`# noqa` comments: which codes a line's comment silences, which codes a file-level
`# gradguard: noqa` exempts the whole file from (as Ruff's `# ruff: noqa`), and the comments
written for the user: the editor's "disable for this line" and `gradguard check --add-noqa`. An
existing `# noqa: A, B` gains the code (codes kept, no duplicate); a bare `# noqa` already silences
everything; a line continued by a backslash cannot take a comment.
"""

from __future__ import annotations

import io
import re
import tokenize
from functools import lru_cache

from gradguard.findings import Edit, Position, Span

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"#\s*gradguard\s*:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?",
                        re.IGNORECASE)
_CODES = re.compile(r"(#\s*noqa:\s*)([A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)


def comment_of(line: str) -> str:
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
    match = _NOQA.search(comment_of(line))
    if match is None:
        return False
    codes = match.group("codes")
    return codes is None or code.upper() in {c.upper() for c in re.split(r"[\s,]+", codes)}


def comments(text: str) -> list[tuple[int, int, str]]:
    """(line, column, comment) for each comment of `text` (those before a tokenizing error, if any)."""
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                found.append((*token.start, token.string))
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def noqa_codes(comment: str) -> tuple[re.Match[str], list[str]] | None:
    """The `# noqa: CODES` directive of `comment` and its codes as written; None when it has
    none, or a bare `# noqa`."""
    match = _NOQA.search(comment)
    if match is None or match.group("codes") is None:
        return None
    return match, re.split(r"[\s,]+", match.group("codes"))


@lru_cache(maxsize=16)
def _file_exemptions(text: str) -> tuple[bool, frozenset[str]]:
    """Whether a `# gradguard: noqa` comment exempts `text` from every code, and the codes that
    `# gradguard: noqa: CODES` comments exempt it from."""
    everything, codes = False, set()
    if "gradguard" in text.lower():
        for _, _, comment in comments(text):
            if (match := _FILE_NOQA.match(comment)) is not None:
                if match.group("codes") is None:
                    everything = True
                else:
                    codes.update(c.upper() for c in re.split(r"[\s,]+", match.group("codes")))
    return everything, frozenset(codes)


def file_exempt(text: str, code: str) -> bool:
    """Whether a file-level `# gradguard: noqa` (every code) or `# gradguard: noqa: CODE` in
    `text` exempts the whole file from `code`, as Ruff's `# ruff: noqa` does."""
    everything, codes = _file_exemptions(text)
    return everything or code.upper() in codes


def lines_ending_in_strings(text: str) -> set[int]:
    """The lines whose end lies inside a string literal (a triple-quoted one that goes on): a
    comment written there would become part of the string."""
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)) and token.end[0] > token.start[0]:
                inside.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass
    return inside


def noqa_edit(line_text: str, line: int, codes: list[str], in_string: bool = False) -> Edit | None:
    """The edit of line `line` (its text without the line ending) that silences `codes`; None
    when it needs none or cannot take one (`in_string`: the line ends inside a string literal)."""
    wanted = [c for c in dict.fromkeys(codes) if not suppressed(line_text, c)]
    if not wanted or in_string or line_text.rstrip().endswith("\\"):
        return None
    comment = comment_of(line_text)
    start = line_text.rfind(comment) if comment else -1
    match = _CODES.search(comment) if comment else None
    if match is not None:
        existing = re.split(r"[\s,]+", match.group(2))
        merged = ", ".join(dict.fromkeys([*existing, *wanted]))
        column = start + match.start(2)
        return Edit(Span(Position(line, column), Position(line, column + len(match.group(2)))), merged)
    end = len(line_text.rstrip())
    return Edit(Span(Position(line, end), Position(line, len(line_text))), f"  # noqa: {', '.join(wanted)}")
