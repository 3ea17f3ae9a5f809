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
for half a megabyte of numbers, and no tensor's history is in them. A data table counts as
literals: keyword arguments, upper-case constants, comments and calls of builtin containers or of
the file's own functions whose code names nothing of torch among them (timm's `default_cfgs =
{'vit_...': _cfg(hf_hub_id='timm/', mean=OPENAI_CLIP_MEAN), ...}`, a quarter of
`vision_transformer.py`'s parse), never a class, a dotted call, an in-place op's name or an `inplace=`. All these searches are one
pass over the text, however long its lines.
"""

from __future__ import annotations

import ast
import gc
import re
import sys
import threading
import warnings
from contextlib import contextmanager
from functools import lru_cache
from typing import Callable, Iterator

import libcst as cst

MAX_BRACKET_DEPTH = 200  # CPython's own limit on nested parentheses
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")
MAX_CHAIN = 1000  # operators (and attribute dots) in one flat chain of terms
SKIPPED = "__gradguard_skipped__"
SCAN = 1 << 17  # characters one search reads at most: the server's other threads wait no longer
# the characters a flat chain is written with (names, numbers, operators, dots, line breaks); in
# their runs, the chains: a term, then links (an operator between optional blanks, and a term). A
# term is matched atomically (a lookahead's capture, matched again) and nothing follows the
# links: the engine never backtracks into a term
_CHAIN_TEXT = r"\w.\s+\-*/%&|^@<>\\"
_BLANKS = r"(?:[ \t]|\\?\r?\n)*"
_LINK = rf"{_BLANKS}(?:\*\*|//|<<|>>|[-+*/%&|^@.]){_BLANKS}(?=(\w{{1,{SCAN}}}))"
_CHAIN_START = re.compile(r"(?<!\w)\w")
_CHAIN = re.compile(rf"(?=(\w{{1,{SCAN}}}))\1(?:{_LINK}\2){{0,1000}}")
_LINKS = re.compile(rf"(?:{_LINK}\1){{1,1000}}")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
MAX_LITERAL = 10_000  # characters of literals between a pair of brackets
# the characters literals are written with; in their runs, the runs of literal tokens (numbers,
# one-line strings, None/True/False) and containers' separators; inside those, the brackets,
# strings skipped. Each token is atomic and nothing follows the repetition: no backtracking; at
# most 1,000 tokens a match, as the engine keeps a record of each repetition until it ends
_LITERAL_TEXT = r"\w\s.,:'\"+\-()\[\]{}\\=#/"
_QUOTED = re.compile(r"\"[^\"\\\r\n]*(?:\\.[^\"\\\r\n]*)*\"|'[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*'")
# a data table's other tokens, each a whole word (not part of one, nor an attribute: `nn.X`, `a.b`)
# matched at once (a lookahead's capture, matched again): a keyword argument (none naming `inplace`,
# nor `out=`, `max_norm=`), a call of a plain lower-case name (`_cfg(`, `dict(`: not a class, not an
# in-place `x_(`; `_plain_calls` checks what each one is), an upper-case constant's name
# (`IMAGENET_DEFAULT_MEAN`, not called), a comment
_TABLE_TOKENS = (rf"|(?<![\w.])(?=[a-z_])(?!\w*inplace|(?:out|max_norm)\b)(?=(\w{{1,{SCAN}}}))\1[ \t]*=(?!=)"
                 rf"|(?<![\w.])(?=[a-z_])(?=(\w{{1,{SCAN}}}))\2(?<!_)(?=[ \t]*\()"
                 rf"|(?<![\w.])(?=[A-Z][A-Z0-9_]*\b)(?=(\w{{1,{SCAN}}}))\3(?![ \t]*\()"
                 r"|#[^\r\n]*")
_STRING_OR_COMMENT = re.compile(rf"[bBrRuU]{{0,2}}(?:{_QUOTED.pattern})|#[^\r\n]*")
_CALLED = re.compile(r"(?<![\w.])([a-z_]\w*)[ \t]*\(")
_DATA_BUILTINS = frozenset({"dict", "list", "tuple", "set", "frozenset", "str", "int", "float", "bool"})
_TOP_LEVEL = re.compile(r"\n(?=[^\s#])")  # the start of the next top-level statement
_TENSORISH = re.compile(r"torch|[Tt]ensor|Parameter|nn\.|requires_grad|numpy|np\.|lambda|global|nonlocal")
_LITERALS = re.compile(rf"(?:[\s,:+\-()\[\]{{}}]+|\.?\d[\w.]{{0,{SCAN}}}|[bBrRuU]{{0,2}}(?:{_QUOTED.pattern})"
                       rf"|(?:None|True|False)\b{_TABLE_TOKENS}){{1,1000}}")
_BRACKET_OR_QUOTE = re.compile(r"[()\[\]{}\"'#]")
_COMMENT = re.compile(r"#[^\r\n]*")


class TooDeeplyNested(ValueError):
    """The text nests brackets deeper than CPython accepts."""


class _Parsing(threading.local):
    active = False
    unwanted: Callable[[], bool] | None = None  # asked between two searches of a long text


class Unwanted(Exception):
    """The scan of a long text stopped: its caller no longer wants the result (`stops_when`)."""


@contextmanager
def stops_when(unwanted: Callable[[], bool] | None) -> Iterator[None]:
    """Within, the searches for long chains and literals raise `Unwanted` once `unwanted()` says
    so (a text of megabytes takes a few tenths of a second)."""
    before, _parsing.unwanted = _parsing.unwanted, unwanted
    try:
        yield
    finally:
        _parsing.unwanted = before


def _go_on() -> None:
    if _parsing.unwanted is not None and _parsing.unwanted():
        raise Unwanted()


_parsing = _Parsing()
_validate = cst.CSTNode.__post_init__


def _post_init(node: cst.CSTNode) -> None:
    if not _parsing.active:
        _validate(node)


cst.CSTNode.__post_init__ = _post_init  # type: ignore[method-assign]


def bracket_depth(text: str) -> int:
    """The deepest bracket nesting in `text` (strings and comments included: an upper bound)."""
    depth = deepest = 0
    for char in "".join(_NOT_BRACKETS.sub("", text[at:at + SCAN]) for at in range(0, len(text), SCAN)):
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
    """The (start, end) offsets of the flat chains of at least `MAX_CHAIN` operators in `text`."""
    spans = []
    for start, end in _runs(_CHAIN_TEXT, 2 * MAX_CHAIN, text):
        while (first := _CHAIN_START.search(text, start, min(end, start + SCAN))) is not None or start + SCAN < end:
            _go_on()
            if first is None:
                start += SCAN
                continue
            chain = _CHAIN.match(text, first.start(), end)
            assert chain is not None
            start = chain.end()
            while (more := _LINKS.match(text, start, end)) is not None:
                _go_on()
                start = more.end()
            if start - first.start() > 2 * MAX_CHAIN and _operators(text, first.start(), start) >= MAX_CHAIN:
                spans.append((first.start(), start))
    return tuple(spans)


def _operators(text: str, start: int, end: int) -> int:
    """How many operators join the terms of the chain `text[start:end]`."""
    return sum(text.count(operator, start, end) for operator in "+-*/%&|^@.<>") \
        - text.count("**", start, end) - text.count("//", start, end) \
        - text.count("<<", start, end) - text.count(">>", start, end)


@lru_cache(maxsize=8)
def long_literals(text: str) -> tuple[tuple[int, int], ...]:
    """The (start, end) offsets of the insides of the outermost brackets in `text` that hold more
    than `MAX_LITERAL` characters of literals only."""
    spans: list[tuple[int, int]] = []
    for start, end in _runs(_LITERAL_TEXT, MAX_LITERAL, text):
        while start < end:
            _go_on()
            literals = _LITERALS.search(text, start, min(end, start + SCAN))
            if literals is None:
                start += SCAN
                continue
            start = checked = literals.end()
            while start < end and (more := _LITERALS.match(text, start, end)) is not None:
                start = more.end()
                if start - checked > SCAN:
                    _go_on()
                    checked = start
            if start - literals.start() > MAX_LITERAL:
                spans += [span for span in _bracketed(text, literals.start(), start) if _plain_calls(text, *span)]
    return tuple(spans)


def _plain_calls(text: str, start: int, end: int) -> bool:
    """Whether every call in `text[start:end]` makes plain data: a builtin container or number, or
    a top-level function of `text` whose code names nothing of torch (`_cfg(...)` returning a dict)."""
    code = _STRING_OR_COMMENT.sub(" ", text[start:end])
    for name in {found.group(1) for found in _CALLED.finditer(code)} - _DATA_BUILTINS:
        definition = re.search(rf"^(?:async[ \t]+)?def[ \t]+{name}[ \t]*\(", text, re.MULTILINE)
        if definition is None:
            return False
        following = _TOP_LEVEL.search(text, definition.end())
        if _TENSORISH.search(text, definition.end(), following.start() if following else len(text)):
            return False
    return True


@lru_cache(maxsize=None)
def _class_patterns(characters: str, width: int) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    return (re.compile(rf"[{characters}]{{{width}}}"), re.compile(rf"(?s:.*)[^{characters}]"),
            re.compile(rf"[{characters}]{{1,{SCAN}}}"))


def _runs(characters: str, minimum: int, text: str) -> list[tuple[int, int]]:
    """The maximal runs of `characters` (a regular expression's class) in `text` at least
    `minimum` long. Each holds a window of `minimum // 2` of them that starts at a multiple of
    that width; the run is found from the window, back to the character before it and on
    `SCAN` characters at a time."""
    width = minimum // 2
    window, before, ahead = _class_patterns(characters, width)
    runs: list[tuple[int, int]] = []
    covered = 0
    for at in range(0, len(text) - width + 1, width):
        if at < covered or window.match(text, at) is None:
            continue
        _go_on()
        low = max(at - width, covered)
        start = found.end() if (found := before.match(text, low, at)) is not None else low
        end = at
        while (more := ahead.match(text, end)) is not None:
            _go_on()
            end = more.end()
            if end - more.start() < SCAN:
                break
        if end - start >= minimum:
            runs.append((start, end))
        covered = end
    return runs


def _bracketed(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The insides of the outermost bracket pairs of `text[start:end]` (literals only) longer
    than `MAX_LITERAL`."""
    spans, depth, inside, checked = [], 0, 0, start
    while (found := _BRACKET_OR_QUOTE.search(text, start, end)) is not None:
        start, mark = found.end(), found.group()
        if start - checked > SCAN:
            _go_on()
            checked = start
        if mark == "#":
            start = _COMMENT.match(text, found.start(), end).end()  # type: ignore[union-attr]
        elif mark in "\"'":
            start = string.end() if (string := _QUOTED.match(text, found.start(), end)) is not None else start
        elif mark in "([{":
            inside = inside if depth else start
            depth += 1
        elif depth:
            depth -= 1
            if not depth and found.start() - inside > MAX_LITERAL:
                spans.append((inside, found.start()))
    return spans


def _masked(text: str, spans: tuple[tuple[int, int], ...], literals: tuple[tuple[int, int], ...] = ()) -> str:
    """`text` with each span replaced by `SKIPPED` padded with underscores, its line breaks (and
    continuation backslashes) kept so that every other token keeps its line and column: a name
    (its value is not known), or a string for the spans in `literals` (whose values are only
    constants: a long string costs the parsers least). It fills the span's last line where it
    fits (else it stands on its first): no long run of blanks, which costs libcst most."""
    parts, done = [], 0
    for start, end in spans:
        ends = [line_break.span() for line_break in _LINE_BREAK.finditer(text, start, end)]
        breaks = [text[a - (text[a - 1] == "\\"):b] for a, b in ends]  # with the backslash before it
        last = end - ends[-1][1] if ends else end - start
        quote = "'" if (start, end) in literals else ""
        if last >= len(SKIPPED) + 2 * len(quote) or not breaks:
            parts += [text[done:start], *breaks, quote + SKIPPED.ljust(last - 2 * len(quote), "_") + quote]
        else:
            parts += [text[done:start], quote + SKIPPED + quote, *breaks, " " * last]
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


@lru_cache(maxsize=4)
def for_parsers(text: str, literals: bool = True) -> str:
    """`text` as the parsers see it: its long chains (and, with `literals`, its long literals)
    replaced by `SKIPPED`, every line where it was."""
    spans = skipped(text) if literals else long_chains(text)
    return _masked(text, spans, long_literals(text) if literals else ()) if spans else text


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


def python_ast(text: str) -> ast.Module:
    """CPython's tree of `text`, for the statements' lines (its warnings are the compiler's
    business), long chains and literals skipped as libcst's tree skips them, unless that makes
    it refuse."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if (masked := for_parsers(text)) is not text:
            try:
                return ast.parse(masked)
            except SyntaxError:
                pass
        return ast.parse(text)


def _parsed(text: str) -> cst.Module:
    if bracket_depth(text) > MAX_BRACKET_DEPTH:
        raise TooDeeplyNested("too many nested parentheses")
    with _building_tree():
        return cst.parse_module(text)
