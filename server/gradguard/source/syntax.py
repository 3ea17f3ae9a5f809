"""A syntax problem, and where CPython places it: what a document or a notebook cell says when it
does not parse. Only `ast`: checking a notebook's cells needs no libcst."""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

from gradguard.findings import Position


def python_syntax_problem(text: str) -> SyntaxProblem | None:
    """Where CPython places the syntax error (libcst points at the token after it); None if it parses."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as error:
        if error.lineno is None:  # CPython's refusal of a null character
            return SyntaxProblem(error.msg, failed_at(error, text))
        line = max(error.lineno, 1)
        return SyntaxProblem(error.msg, Position(line, max((error.offset or 1) - 1, 0)))
    except (ValueError, RecursionError, MemoryError) as error:
        return SyntaxProblem(str(error), failed_at(error, text))
    return None


def failed_at(error: Exception, text: str) -> Position:
    """Where a parser's failure other than a syntax error lies in `text`: the character UTF-8
    cannot encode (a lone surrogate an editor sent) for a `UnicodeEncodeError`, the first null
    character for CPython's refusal of one, else the file's start."""
    if isinstance(error, UnicodeEncodeError) and isinstance(error.object, str):
        return position_at(error.object, error.start)
    if "null" in str(error) and (null := text.find("\0")) >= 0:
        return position_at(text, null)
    return Position(1, 0)


def position_at(text: str, offset: int) -> Position:
    """The line (from 1) and column (in characters, from 0) of the character at `offset` in `text`."""
    return Position(text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1))


@dataclass(frozen=True)
class SyntaxProblem:
    """Why a file could not be parsed, and where; `skipped`: gradguard chose not to (its size);
    `unreadable`: its text could not be read."""

    message: str
    position: Position
    skipped: bool = False
    unreadable: bool = False
