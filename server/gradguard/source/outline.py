"""Where a file's functions are, for its skeleton (`skeleton.py`): found from its lines.

A skeleton needs, for each function of the top level, of class bodies and of compound
statements (not of function bodies), the lines of its decorators, header and body, and its
decorators' names. CPython's `ast` knows them, but building its tree costs a quarter of libcst's
parse of the same text: more than the rest of a skeleton. `scan` finds them from the lines
instead: strings and comments masked (one regular expression), logical lines joined where a
bracket is open, a line ends with a backslash or a string goes on, and blocks told by their
indentation, as Python's tokenizer tells them. Text it is not sure of (a tab or form feed in an
indentation, a `match` statement, a decorator that is not a name or a call of one, lines that
do not indent as blocks must) gives None: `of_ast` answers then. The skeleton checks the answer
against libcst's tree of the text it keeps, and parses whole what does not match.
"""

from __future__ import annotations

import ast
import re
from typing import Iterator, NamedTuple

__all__ = ["BLANK_OR_COMMENT", "Function", "Outline", "of_ast", "scan"]


class Function(NamedTuple):
    """A function's lines (1-based): `start` its first decorator's (or its `def`'s), `header`
    its `def`'s, `first` its first body statement's (or that statement's first decorator's),
    `end` its last statement's last; `inline` when its body begins on a header line."""

    name: str
    asynchronous: bool
    start: int
    header: int
    first: int
    end: int
    inline: bool
    heads: tuple[tuple[str | None, bool], ...]  # each decorator's dotted name and whether it is a call


class Outline(NamedTuple):
    functions: list[Function]  # in the order of the text
    own: set[str]  # the names the top level defines with `def` or `class`


BLANK_OR_COMMENT = re.compile(r"[ \t\f]*(?:#.*)?(?:\r\n|\n)?\Z")
_TOKEN = re.compile(r'#[^\n]*+'
                    r'|"""[^"\\]*+(?:(?:\\.|"(?!""))[^"\\]*+)*+"""'
                    r"|'''[^'\\]*+(?:(?:\\.|'(?!''))[^'\\]*+)*+'''"
                    r'|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'
                    r"|'[^'\\\n]*+(?:\\.[^'\\\n]*+)*+'", re.S)
_OPENING = str.maketrans("([{", "(((")
_DEF = re.compile(r"(async\s+)?def\s+(\w+)")
_CLASS = re.compile(r"class\s+(\w+)")
_MATCH = re.compile(r"match\b(?!\s*[=.,)\]}:])")
_DOTTED = re.compile(r"\s*([^\W\d]\w*(?:\s*\.\s*[^\W\d]\w*)*)\s*")


class _Unsure(Exception):
    """The lines say something the scan does not read as Python's tokenizer would."""


def scan(text: str) -> Outline | None:
    """The functions of `text` found from its lines (None where the scan is not sure)."""
    try:
        return _scanned(text)
    except _Unsure:
        return None


def _masked(text: str) -> tuple[list[str], set[int]]:
    """`text`'s lines with every string a `S` and every comment gone, and the (0-based) lines
    that begin inside a string."""
    pieces: list[str] = []
    inside: set[int] = set()
    line = position = 0
    for token in _TOKEN.finditer(text):
        code = text[position:token.start()]
        line += code.count("\n")
        pieces.append(code)
        position = token.end()
        if token.group()[0] == "#":
            continue
        breaks = token.group().count("\n")
        pieces.append("S" + "\n" * breaks)
        inside.update(range(line + 1, line + breaks + 1))
        line += breaks
    pieces.append(text[position:])
    return "".join(pieces).split("\n"), inside


def _logical_lines(masked: list[str], inside: set[int]) -> Iterator[tuple[int, int, int, str]]:
    """Each logical line: its first and last (0-based) line, its indentation, and its code."""
    start = -1
    depth = 0
    going_on = False
    parts: list[str] = []
    for number, code in enumerate(masked):
        if start < 0:
            if not code.strip():
                continue
            if number in inside:
                raise _Unsure
            start = number
        parts.append(code)
        depth += code.translate(_OPENING).count("(") - code.count(")") - code.count("]") - code.count("}")
        going_on = code.rstrip().endswith("\\")
        if depth < 0:
            raise _Unsure
        if depth == 0 and not going_on and number + 1 not in inside:
            first = parts[0]
            stripped = first.lstrip(" ")
            indentation = first[:len(first) - len(stripped)]
            if stripped[:1] in ("\t", "\f"):
                raise _Unsure
            yield start, number, len(indentation), " ".join(p.rstrip().removesuffix("\\") for p in parts).strip()
            start, parts = -1, []
    if start >= 0 or depth:
        raise _Unsure


def _head(expression: str) -> tuple[str | None, bool]:
    """A decorator's dotted name (a call's: its callee's) and whether it is a call, from its code
    after the `@`, as `ast` would give them."""
    named = _DOTTED.match(expression)
    if named is None:
        raise _Unsure
    name = re.sub(r"\s+", "", named.group(1))
    rest = expression[named.end():].rstrip()
    if not rest:
        return name, False
    if rest[0] != "(":
        raise _Unsure
    depth = 0
    for position, character in enumerate(rest):
        depth += character in "([{"
        depth -= character in ")]}"
        if depth == 0:
            if position != len(rest) - 1:
                raise _Unsure  # `@make(1)(2)`, `@table["x"]`
            return name, True
    raise _Unsure


def _scanned(text: str) -> Outline:
    masked, inside = _masked(text)
    logical = list(_logical_lines(masked, inside))
    functions: list[Function] = []
    own: set[str] = set()
    decorators: list[tuple[int, int, str]] = []  # (line, indentation, code) of the decorators just seen
    index = 0
    while index < len(logical):
        start, last, indentation, code = logical[index]
        index += 1
        if code.startswith("@"):
            decorators.append((start, indentation, code[1:]))
            continue
        defined = _DEF.match(code)
        if defined is None:
            if _MATCH.match(code) and code.endswith(":"):
                raise _Unsure  # what a `match` block holds is not the skeleton's
            if indentation == 0 and (named := _CLASS.match(code)) is not None:
                own.add(named.group(1))
            decorators = []
            continue
        if any(d[1] != indentation for d in decorators):
            raise _Unsure
        name = defined.group(2)
        if indentation == 0:
            own.add(name)
        heads = tuple(_head(d[2]) for d in decorators)
        opening = decorators[0][0] if decorators else start
        decorators = []
        if not code.endswith(":"):
            functions.append(Function(name, defined.group(1) is not None, opening + 1, start + 1, start + 1,
                                      last + 1, True, heads))
            continue
        if index == len(logical) or logical[index][2] <= indentation:
            raise _Unsure  # a header without its indented block
        first, end = logical[index][0], logical[index][1]
        while index < len(logical) and logical[index][2] > indentation:
            end = logical[index][1]
            index += 1
        functions.append(Function(name, defined.group(1) is not None, opening + 1, start + 1, first + 1, end + 1,
                                  False, heads))
    if decorators:
        raise _Unsure
    return Outline(functions, own)


def of_ast(tree: ast.Module, lines: list[str]) -> Outline:
    """The same outline read from CPython's tree of the text whose lines are `lines`."""
    functions = []
    for function in _ast_functions(tree.body):
        body = function.body[0]
        start = min([function.lineno, *(d.lineno for d in function.decorator_list)])
        first = min([body.lineno, *(d.lineno for d in getattr(body, "decorator_list", ()))])
        header_end = first - 1
        while header_end > function.lineno and BLANK_OR_COMMENT.match(lines[header_end - 1]):
            header_end -= 1
        inline = header_end < function.lineno or not _starts_line(body, lines[first - 1])
        functions.append(Function(function.name, isinstance(function, ast.AsyncFunctionDef), start, function.lineno,
                                  first, function.end_lineno or first, inline,
                                  tuple(_ast_head(d) for d in function.decorator_list)))
    own = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return Outline(functions, own)


def _starts_line(statement: ast.stmt, line: str) -> bool:
    """Whether `statement` (or its first decorator's `@`) is the first thing on its first line, not
    after a header's colon (`col_offset` counts UTF-8 bytes)."""
    decorators = getattr(statement, "decorator_list", ())
    column = decorators[0].col_offset - 1 if decorators else statement.col_offset
    return not line.encode("utf-8")[:max(column, 0)].strip()


def _ast_head(decorator: ast.expr) -> tuple[str | None, bool]:
    """A decorator's dotted name (a call's: its callee's) as `names.dotted_name` spells it, and
    whether it is a call."""
    called = isinstance(decorator, ast.Call)
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts)), called
    return ("." + ".".join(reversed(parts)) if parts else None), called


def _ast_functions(statements: list[ast.stmt]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions of `statements`, of their classes and compound statements (not of function
    bodies), in the order of the text."""
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield statement
        elif isinstance(statement, ast.ClassDef):
            yield from _ast_functions(statement.body)
        elif isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
            yield from _ast_functions(statement.body)
            yield from _ast_functions(getattr(statement, "orelse", []))
        elif isinstance(statement, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            yield from _ast_functions(statement.body)
            for handler in statement.handlers:
                yield from _ast_functions(handler.body)
            yield from _ast_functions(statement.orelse)
            yield from _ast_functions(statement.finalbody)
