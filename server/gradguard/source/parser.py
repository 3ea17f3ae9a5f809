"""libcst's parser, without the costs a freshly parsed tree does not need.

`libcst.parse_module` spends about a third of a large file's parse on two things:

- each node validates itself in `CSTNode.__post_init__` (whitespace patterns, parentheses…), a
  fifth of the parse. The parser builds only valid nodes; libcst's own comment there says the
  check belongs elsewhere. While `parse_module` runs in a thread, that thread's nodes skip it;
  nodes built anywhere else (the fixes' codemods) are still validated.
- the cyclic garbage collector walks the ever larger part of the tree already built. The tree
  makes no garbage: collection pauses while it is built.

Deeply nested brackets crash libcst's native parser: they are refused before it sees them.
"""

from __future__ import annotations

import gc
import re
import threading
from contextlib import contextmanager
from typing import Iterator

import libcst as cst

MAX_BRACKET_DEPTH = 200  # CPython's own limit on nested parentheses
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")


class TooDeeplyNested(ValueError):
    """The text nests brackets deeper than CPython accepts."""


class _Parsing(threading.local):
    active = False


_parsing = _Parsing()
_validate = cst.CSTNode.__post_init__


def _post_init(node: cst.CSTNode) -> None:
    if not _parsing.active:
        _validate(node)


cst.CSTNode.__post_init__ = _post_init  # type: ignore[method-assign]


def bracket_depth(text: str) -> int:
    """The deepest bracket nesting in `text` (strings and comments included: an upper bound)."""
    depth = deepest = 0
    for char in _NOT_BRACKETS.sub("", text):
        depth = depth + 1 if char in "([{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection within: for work that builds many objects and frees few
    (each collection would walk all the objects built so far)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def _building_tree() -> Iterator[None]:
    _parsing.active = True
    try:
        with collector_paused():
            yield
    finally:
        _parsing.active = False


def parse_module(text: str) -> cst.Module:
    """libcst's tree of `text` (raises `libcst.ParserSyntaxError`, or `TooDeeplyNested`)."""
    if bracket_depth(text) > MAX_BRACKET_DEPTH:
        raise TooDeeplyNested("too many nested parentheses")
    with _building_tree():
        return cst.parse_module(text)
