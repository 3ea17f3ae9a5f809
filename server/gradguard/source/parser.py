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
to is unknown; a fix never writes it, see `engine`). So is a bracket holding more than
`MAX_LITERAL` characters of nothing but literals (`DATA = [0.1, 0.2, ...]`, a vocabulary's
strings, nested lists of numbers): libcst builds nodes for every element, seconds and a gigabyte
for half a megabyte of numbers, and no tensor's history is in them. All these searches are one
pass over the text, however long its lines.
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
# a maximal chain: a term, then links (an operator between optional blanks, and a term). A term
# is matched atomically (a lookahead's capture, matched again) and nothing follows the links, so
# the engine never backtracks into a term: one pass over a run, however long its words
_BLANKS = r"(?:[ \t]|\\?\r?\n)*"
_CHAIN = re.compile(rf"(?<!\w)(?=(\w+))\1(?:{_BLANKS}(?:\*\*|//|<<|>>|[-+*/%&|^@.]){_BLANKS}(?=(\w+))\2)*")
_TERM = re.compile(r"\w+")
_LINE_BREAK = re.compile(r"\\?[\r\n]")
_BLANKED = re.compile(r"(?!\\\r?\n)[^\r\n]")  # all a skipped span keeps: its line breaks, continuations
MAX_LITERAL = 10_000  # characters of literals between a pair of brackets
# a run of literal tokens (numbers, one-line strings, None/True/False) and the separators of
# containers, found in the runs of the characters they are written with; inside one, its
# brackets, strings skipped. Each token is atomic (a number's digits, a string's quotes) and
# nothing follows the repetition: no backtracking; at most 1,000 tokens a match, as the engine
# keeps a record of each repetition until the match ends
_STRING = r"[bBrRuU]{0,2}(?:\"[^\"\\\r\n]*(?:\\.[^\"\\\r\n]*)*\"|'[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*')"
_LITERAL_TEXT = r"\w\s.,:'\"+\-()\[\]{}\\"
_LITERAL_TEXT_RUN = re.compile(rf"(?<![{_LITERAL_TEXT}])[{_LITERAL_TEXT}]{{{MAX_LITERAL},}}")
_LITERALS = re.compile(rf"(?:[\s,:+\-()\[\]{{}}]+|\.?\d[\w.]*|{_STRING}|(?:None|True|False)\b){{1,1000}}")
_BRACKET = re.compile(rf"{_STRING}|[(\[{{]|[)\]}}]")


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
                 for chain in _CHAIN.finditer(text, run.start(), run.end())
                 if chain.end() - chain.start() > 2 * MAX_CHAIN and _links(chain) >= MAX_CHAIN)


def _links(chain: re.Match[str]) -> int:
    """How many operators join the terms of `chain`."""
    return sum(1 for _ in _TERM.finditer(chain.string, chain.start(), chain.end())) - 1


@lru_cache(maxsize=8)
def long_literals(text: str) -> tuple[tuple[int, int], ...]:
    """The (start, end) offsets of the insides of the outermost brackets in `text` that hold more
    than `MAX_LITERAL` characters of literals only."""
    spans: list[tuple[int, int]] = []
    for run in _LITERAL_TEXT_RUN.finditer(text):
        start, end = run.span()
        while (literals := _LITERALS.search(text, start, end)) is not None:
            start = literals.end()
            while start < end and (more := _LITERALS.match(text, start, end)) is not None:
                start = more.end()
            if start - literals.start() > MAX_LITERAL:
                spans += _bracketed(text, literals.start(), start)
    return tuple(spans)


def _bracketed(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The insides of the outermost bracket pairs of `text[start:end]` (literals only) longer
    than `MAX_LITERAL`."""
    spans, depth, inside = [], 0, 0
    for token in _BRACKET.finditer(text, start, end):
        bracket = token.group()
        if bracket in "([{":
            if not depth:
                inside = token.end()
            depth += 1
        elif len(bracket) == 1 and depth:
            depth -= 1
            if not depth and token.start() - inside > MAX_LITERAL:
                spans.append((inside, token.start()))
    return spans


def _masked(text: str, spans: tuple[tuple[int, int], ...]) -> str:
    """`text` with each span replaced by `SKIPPED`, its line breaks (and continuation
    backslashes) kept so that every other token keeps its line and column."""
    parts, done = [], 0
    for start, end in spans:
        segment = text[start:end]
        first = _LINE_BREAK.search(segment)
        head = first.start() if first is not None else len(segment)
        parts += [text[done:start], SKIPPED.ljust(head), _BLANKED.sub(" ", segment[head:])]
        done = end
    return "".join(parts) + text[done:]


def skipped(text: str) -> tuple[tuple[int, int], ...]:
    """The spans of `text` no parser sees: long chains and long literals, outermost first."""
    spans = long_chains(text) + long_literals(text)
    kept: list[tuple[int, int]] = []
    for start, end in sorted(spans, key=lambda span: (span[0], -span[1])):
        if not kept or start >= kept[-1][1]:
            kept.append((start, end))
    return tuple(kept)


def for_parsers(text: str, literals: bool = True) -> str:
    """`text` as the parsers see it: its long chains (and, with `literals`, its long literals)
    replaced by `SKIPPED`, every line where it was."""
    spans = skipped(text) if literals else long_chains(text)
    return _masked(text, spans) if spans else text


def parse_module(text: str) -> cst.Module:
    """libcst's tree of `text` (raises `libcst.ParserSyntaxError`, or `TooDeeplyNested`).

    Long literals are skipped only when the text parses with them skipped: a bracket seen in a
    comment or inside a string could make it refuse what parses, and the text as it is then says
    why it does not parse."""
    if long_literals(text):
        try:
            return _parsed(for_parsers(text))
        except cst.ParserSyntaxError:
            pass
    return _parsed(for_parsers(text, literals=False))


def _parsed(text: str) -> cst.Module:
    if bracket_depth(text) > MAX_BRACKET_DEPTH:
        raise TooDeeplyNested("too many nested parentheses")
    with _building_tree():
        return cst.parse_module(text)
