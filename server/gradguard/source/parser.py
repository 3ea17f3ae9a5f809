"""libcst's parser, without the costs a freshly parsed tree does not need.

`libcst.parse_module` spends about a third of a large file's parse on two things:

- each node validates itself in `CSTNode.__post_init__` (whitespace patterns, parentheses…), a
  fifth of the parse. The parser builds only valid nodes; libcst's own comment there says the
  check belongs elsewhere. While `parse_module` runs in a thread, that thread's nodes skip it;
  nodes built anywhere else (the fixes' codemods) are still validated.
- the cyclic garbage collector walks the ever larger part of the tree already built. The tree
  makes no garbage: collection pauses while it is built.

Deeply nested brackets crash libcst's native parser: they are refused before it sees them.
libcst's parse time grows with the square of a flat chain's length (`1 + 1 + ...`, `a.b.c...`:
3,000 terms take seconds): a chain of more than `MAX_CHAIN` operators is replaced, in the text
the parser sees, by the name `SKIPPED` padded to the same lines and columns (what it evaluates
to is unknown; a fix never writes it, see `engine`).
"""

from __future__ import annotations

import gc
import re
import sys
import threading
from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator

import libcst as cst

MAX_BRACKET_DEPTH = 200  # CPython's own limit on nested parentheses
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")
MAX_CHAIN = 1000  # operators (and attribute dots) in one flat chain of terms
SKIPPED = "__gradguard_skipped__"
# a run of text that can hold nothing but a flat chain (names, numbers, operators, dots, line
# breaks), found from its start only; inside one, the chain itself
_CHAIN_TEXT = r"\w.\s+\-*/%&|^@<>\\"
_CHAIN_RUN = re.compile(rf"(?<![{_CHAIN_TEXT}])[{_CHAIN_TEXT}]{{{2 * MAX_CHAIN},}}")
_CHAIN_WINDOW = re.compile(rf"[{_CHAIN_TEXT}]{{{MAX_CHAIN}}}")
_CHAIN = re.compile(r"\w+(?:(?:[ \t]|\\\r?\n|\r?\n)*(?:\*\*|//|<<|>>|[-+*/%&|^@.])(?:[ \t]|\\\r?\n|\r?\n)*\w+)"
                    rf"{{{MAX_CHAIN},}}")
_LINE_BREAK = re.compile(r"\\?[\r\n]")


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


RECURSION_LIMIT = 12_000  # libcst's visitors and code generation recurse once per level of the tree
THREAD_STACK = 256 * 1024 * 1024  # for threads that analyse: room for that many frames


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection within: for work that builds many objects and frees few
    (each collection would walk all the objects built so far). Deep trees may recurse as far as
    `RECURSION_LIMIT` within."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:  # as it was before, whatever the code within did to it
        if enabled:
            gc.enable()
        else:
            gc.disable()


@contextmanager
def _building_tree() -> Iterator[None]:
    _parsing.active = True
    try:
        with collector_paused():
            yield
    finally:
        _parsing.active = False


@lru_cache(maxsize=8)
def long_chains(text: str) -> tuple[tuple[int, int], ...]:
    """The (start, end) offsets of the flat chains of more than `MAX_CHAIN` operators in `text`.

    A run of `2 * MAX_CHAIN` characters holds one of the windows of `MAX_CHAIN` characters that
    start at multiples of `MAX_CHAIN`: without such a window of chain characters (ordinary code
    has brackets every few characters), no run is searched for.
    """
    if not any(_CHAIN_WINDOW.match(text, start) for start in range(0, len(text) - MAX_CHAIN + 1, MAX_CHAIN)):
        return ()
    return tuple(chain.span() for run in _CHAIN_RUN.finditer(text)
                 for chain in _CHAIN.finditer(text, run.start(), run.end()))


def _masked(text: str, chains: tuple[tuple[int, int], ...]) -> str:
    """`text` with each chain replaced by `SKIPPED`, its line breaks (and continuation
    backslashes) kept so that every other token keeps its line and column."""
    parts, done = [], 0
    for start, end in chains:
        segment = text[start:end]
        first = _LINE_BREAK.search(segment)
        head = first.start() if first is not None else len(segment)
        parts += [text[done:start], SKIPPED.ljust(head),
                  "".join(c if c in "\\\r\n" else " " for c in segment[head:])]
        done = end
    return "".join(parts) + text[done:]


def parse_module(text: str) -> cst.Module:
    """libcst's tree of `text` (raises `libcst.ParserSyntaxError`, or `TooDeeplyNested`)."""
    if bracket_depth(text) > MAX_BRACKET_DEPTH:
        raise TooDeeplyNested("too many nested parentheses")
    chains = long_chains(text)
    with _building_tree():
        return cst.parse_module(_masked(text, chains) if chains else text)
