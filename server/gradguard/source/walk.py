"""Walks over a libcst tree that read a node's fields directly: the analysis's searches (a name's
references, a function's `yield`s, a `.backward()`) in a twentieth of the time of libcst's visitors,
which dispatch every node, whitespace and punctuation included, through generic hooks.

Only fields that can hold code are read: whitespace, comments, brackets, commas and operators
are never entered.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import libcst as cst

__all__ = ["HOLDS_STATEMENTS", "bound_names", "children", "descendants", "in_same_scope", "in_statements"]

_FORMATTING = (cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Comment, cst.Newline,
               cst.Semicolon, cst.Comma, cst.Dot, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket,
               cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.BaseBinaryOp, cst.BaseBooleanOp,
               cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp, cst.AssignEqual, cst.Colon, cst.ImportStar,
               cst.Asynchronous)
_FORMATTING_FIELDS = ("whitespace", "lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer",
                      "semicolon", "comma", "newline", "equal", "colon", "dot", "lbracket", "rbracket",
                      "lbrace", "rbrace", "operator", "asynchronous")
_FIELDS: dict[type, tuple[str, ...]] = {}
_CODE: dict[type, bool] = {}  # per class: a code node (libcst's base classes are ABCs: `isinstance` is slow)


def _code_fields(kind: type) -> tuple[str, ...]:
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind)
                                       if not f.name.startswith(_FORMATTING_FIELDS))
    return fields


def _subclass(kind: type, bases: tuple[type, ...]) -> bool:
    """`issubclass` by the class's own bases: libcst's are ABCs, whose first answer for a class walks
    every subclass they have (a first analysis spent 10 ms there); libcst registers no virtual ones."""
    return any(base in bases for base in kind.__mro__)


def _is_code(kind: type) -> bool:
    code = _CODE.get(kind)
    if code is None:
        code = _CODE[kind] = _subclass(kind, (cst.CSTNode,)) and not _subclass(kind, _FORMATTING)
    return code


def _add_children(node: cst.CSTNode, found: list[cst.CSTNode]) -> None:
    """Append to `found` the nodes directly under `node` that can hold code (a walk spends most of
    its time here: the classes' answers are read from their dicts first)."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    for name in _code_fields(kind) if fields is None else fields:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            for item in value:
                code = _CODE.get(type(item))
                if code or (code is None and _is_code(type(item))):
                    found.append(item)
        else:
            code = _CODE.get(kind)
            if code or (code is None and _is_code(kind)):
                found.append(value)


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes directly under `node` that can hold code, in no particular order."""
    found: list[cst.CSTNode] = []
    _add_children(node, found)
    return iter(found)


def descendants(node: cst.CSTNode, into: Callable[[cst.CSTNode], bool] | None = None) -> Iterator[cst.CSTNode]:
    """Every code node under `node` (not `node` itself), in no particular order; a node for which
    `into` is false is given but not entered."""
    pending: list[cst.CSTNode] = []
    _add_children(node, pending)
    while pending:
        current = pending.pop()
        yield current
        if into is None or into(current):
            _add_children(current, pending)


HOLDS_STATEMENTS = (cst.BaseSuite, cst.BaseCompoundStatement, cst.SimpleStatementLine, cst.Else, cst.ExceptHandler,
                    cst.ExceptStarHandler, cst.Finally, cst.MatchCase)


_HOLDS: dict[type, bool] = {}  # per class: whether it holds statements


def in_statements(node: cst.CSTNode) -> bool:
    """For `descendants(..., into=in_statements)`: a walk of the statements only (a `def`, a `with`,
    a `return` is never inside an expression)."""
    holds = _HOLDS.get(type(node))
    if holds is None:
        holds = _HOLDS[type(node)] = _subclass(type(node), HOLDS_STATEMENTS)
    return holds


def bound_names(target: cst.BaseExpression) -> Iterator[str]:
    """The names an assignment to `target` binds (`a`, `a, (b, *c)`: a, b, c)."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from bound_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from bound_names(target.value)


_SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})


def in_same_scope(node: cst.CSTNode) -> bool:
    """For `descendants(..., into=in_same_scope)`: a walk of one scope's own code (a nested `def`,
    `lambda` or `class` is given but not entered)."""
    return type(node) not in _SCOPES
