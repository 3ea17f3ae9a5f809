"""An imported file parsed as a skeleton: its functions parsed only when first needed.

A file read for the names it defines (`ProjectIndex`) runs its top level: imports, assignments,
class bodies, `def` statements. Its functions run only when a call of the importing file is
followed into them, and most never are: a model file imports a dozen layers from a package of
sixty files. Yet parsing them is most of libcst's cost of the file: their bodies, and their
headers too (decorators, annotated signatures: a third of a library's skeleton).

`parse_skeleton` finds every function of the top level, of class bodies and of top-level
compound statements from the lines (`outline.scan`; Python's own parser where the scan is not
sure, `ast`: a quarter of libcst's time, more than the rest of a skeleton), has libcst parse
the text with each function of `MIN_LINES` lines or more (decorators included) replaced by
`def name():` and a `...` body, and puts a `LazyFunctionDef` in its place: it knows its name and
the lines before it; its other fields (decorators, parameters, annotations...) are parsed from
the original lines at the first read of any of them, and its body, then a `LazyBlock`, at the
first read of that body's statements. Both are then the same objects at every read. The tree's
code is the original text exactly (`Module.code`, and so libcst's positions, resolved over the
whole tree, are the original's): the leading lines, the body's indentation and footer are those
the skeleton parsed, the rest those of the original lines.

A text neither the scan nor `ast` outlines, one whose lines `ast` may count differently (a lone
carriage return), or one whose skeleton libcst does not give back as expected is parsed whole.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from typing import Iterator, Sequence

import libcst as cst

from gradguard.source.lines import lines_of
from gradguard.source.outline import BLANK_OR_COMMENT, of_ast, scan
from gradguard.source.parser import MAX_BRACKET_DEPTH, TooDeeplyNested, bracket_depth, parse_module, python_ast

__all__ = ["LazyBlock", "LazyFunctionDef", "MIN_LINES", "is_skeleton", "parse_skeleton", "unparsed_bodies"]

MIN_LINES = 3  # a shorter function is parsed with the skeleton: its own parse would cost more than it saves
_INDENT = re.compile(r"[ \t\f]*")
_realizing = threading.Lock()


class LazyBlock(cst.IndentedBlock):
    """A function's indented body whose statements are parsed from `source` at the first read."""

    __slots__ = ("_statements", "_source", "_placeholder")

    def _get_body(self) -> Sequence[cst.BaseStatement]:
        statements = self._statements
        if statements is None:
            with _realizing:  # two threads reading it at once get the same statements
                statements = self._statements
                if statements is None:
                    try:
                        statements = _statements_of(*self._source)  # type: ignore[misc]
                    except (cst.ParserSyntaxError, TooDeeplyNested, RecursionError):
                        # not expected: `parse_skeleton` parses whole what a body's parse could refuse. The
                        # body then runs as the skeleton's `...` (a miss, never a false alarm) rather
                        # than stopping the analysis that followed a call into it
                        statements = self._placeholder
                    object.__setattr__(self, "_statements", statements)
                    object.__setattr__(self, "_source", None)
        return statements

    def _set_body(self, statements: Sequence[cst.BaseStatement]) -> None:
        """The dataclass's `__init__` (a copy: `with_changes`, `deep_clone`) gives the statements."""
        object.__setattr__(self, "_statements", statements)
        object.__setattr__(self, "_source", None)
        object.__setattr__(self, "_placeholder", ())

    body = property(_get_body, _set_body)  # type: ignore[assignment]

    @property
    def parsed(self) -> bool:
        """Whether the statements were parsed (read) yet."""
        return self._statements is not None

    @property
    def unparsed_text(self) -> str | None:
        """The original lines of the body while its statements are not parsed yet."""
        return None if self._statements is not None or self._source is None else self._source[0]  # type: ignore[index]

    def __reduce__(self) -> tuple[object, ...]:
        return _rebuilt, (self.header, self.indent, self.footer, self._statements, self._source, self._placeholder)


def _rebuilt(header: cst.TrailingWhitespace, indent: str | None, footer: Sequence[cst.EmptyLine],
             statements: Sequence[cst.BaseStatement] | None, source: tuple[str, str, str] | None,
             placeholder: Sequence[cst.BaseStatement]) -> LazyBlock:
    block = LazyBlock.__new__(LazyBlock)
    for name, value in (("header", header), ("indent", indent), ("footer", footer),
                        ("_statements", statements), ("_source", source), ("_placeholder", placeholder)):
        object.__setattr__(block, name, value)
    return block


_LAZY_FIELDS = frozenset(f.name for f in dataclasses.fields(cst.FunctionDef)) - {"name", "leading_lines"}


@dataclasses.dataclass(frozen=True)
class _DefSource:
    """What a `LazyFunctionDef` is parsed from: the original lines of its decorators and header,
    then of its body; the skeleton's stand-in (its body's indentation and footer, and what the
    function is if its lines do not parse)."""

    header: str
    body: str
    body_indent: str  # the original first line's indentation, the stand-in body's
    column: int  # of the `def` (or its first decorator)
    indent: str  # the module's default indentation and line break
    newline: str
    stand_in: cst.FunctionDef
    decorators: tuple[tuple[str | None, bool], ...]  # `decorator_heads`, read from `ast`


class LazyFunctionDef(cst.FunctionDef):
    """A function of the skeleton whose fields other than its name and leading lines are parsed
    from its original lines at the first read of any of them (its body then a `LazyBlock`)."""

    __slots__ = ("_source",)

    def __getattr__(self, name: str) -> object:
        """A field not set yet (an unset slot reads as missing): the function's lines parsed."""
        if name not in _LAZY_FIELDS:
            raise AttributeError(name)
        with _realizing:
            try:
                source = object.__getattribute__(self, "_source")
            except AttributeError:
                source = None
            if source is not None:
                for field, value in _fields_of(source).items():
                    object.__setattr__(self, field, value)
                object.__setattr__(self, "_source", None)
        return object.__getattribute__(self, name)

    @property
    def parsed(self) -> bool:
        """Whether its header was parsed (read) yet."""
        try:
            return object.__getattribute__(self, "_source") is None
        except AttributeError:
            return True  # a copy: every field given

    @property
    def unparsed_decorators(self) -> tuple[tuple[str | None, bool], ...] | None:
        """While its header is not parsed: each decorator's dotted name (a call's: its callee's,
        None for another expression) and whether it is a call, read from `ast`."""
        try:
            source = object.__getattribute__(self, "_source")
        except AttributeError:
            return None
        return None if source is None else source.decorators

    @classmethod
    def standing_in(cls, stand_in: cst.FunctionDef, source: _DefSource) -> LazyFunctionDef:
        """The function `stand_in` (the skeleton's `def name(): ...`) stands in for."""
        function = cls.__new__(cls)
        object.__setattr__(function, "name", stand_in.name)
        object.__setattr__(function, "leading_lines", stand_in.leading_lines)
        object.__setattr__(function, "_source", source)
        return function

    def __reduce__(self) -> tuple[object, ...]:
        if self.parsed:  # a function like any other
            return _copied, ({f.name: getattr(self, f.name) for f in dataclasses.fields(self)},)
        return _unparsed, (self.name, self.leading_lines, object.__getattribute__(self, "_source"))


def _copied(fields: dict[str, object]) -> cst.FunctionDef:
    function = cst.FunctionDef.__new__(cst.FunctionDef)
    for name, value in fields.items():
        object.__setattr__(function, name, value)
    return function


def _unparsed(name: cst.Name, leading_lines: Sequence[cst.EmptyLine], source: _DefSource) -> LazyFunctionDef:
    function = LazyFunctionDef.__new__(LazyFunctionDef)
    object.__setattr__(function, "name", name)
    object.__setattr__(function, "leading_lines", leading_lines)
    object.__setattr__(function, "_source", source)
    return function


def _fields_of(source: _DefSource) -> dict[str, object]:
    """The fields of the function `source` holds, but its name and leading lines: its header
    parsed (the body a `...` at its own indentation), its body a `LazyBlock` of the original lines
    with the stand-in's indentation and footer. Lines that do not parse (not expected: the whole
    text parsed as `ast`) give the stand-in's fields, a function without decorators or
    parameters whose body is `...`: a miss, never a false alarm."""
    stand_in = source.stand_in
    header = f"{source.header}{source.body_indent}...{source.newline}"
    try:
        parsed = parse_module(header).body[0] if source.column == 0 else \
            _statements_of(header, source.indent, source.newline)[0]
    except (cst.ParserSyntaxError, TooDeeplyNested, RecursionError, IndexError):
        parsed = None
    if type(parsed) is not cst.FunctionDef or type(parsed.body) is not cst.IndentedBlock:  # type: ignore[union-attr]
        return {field: getattr(stand_in, field) for field in _LAZY_FIELDS}
    block = stand_in.body
    body = _rebuilt(parsed.body.header, block.indent, block.footer, None,  # type: ignore[union-attr,attr-defined]
                    (source.body, source.indent, source.newline), block.body)  # type: ignore[attr-defined]
    return {**{field: getattr(parsed, field) for field in _LAZY_FIELDS}, "body": body}


def _statements_of(source: str, indent: str, newline: str) -> Sequence[cst.BaseStatement]:
    """The statements of a body's original lines, parsed inside a stand-in `if 1:` (they keep
    their columns; the blocks inside them are indented relative to their own, as in the whole
    file). A first block indented by the skeleton's `indent` gives the parse the same default
    indentation, and the first line its line break: what libcst leaves implicit in the statements
    means the same in both trees."""
    stand_in = f"if 1:{newline}{indent}pass{newline}if 1:{newline}"
    statement = parse_module(stand_in + source).body[1]
    return statement.body.body  # type: ignore[attr-defined]


def parse_skeleton(text: str) -> cst.Module:
    """libcst's tree of `text` with its top-level functions and methods parsed when first read
    (raises what `parse_module` raises)."""
    crlf = text.count("\r\n")
    if "\r" in text.replace("\r\n", "") or 0 < crlf < text.count("\n") or bracket_depth(text) > MAX_BRACKET_DEPTH:
        # the whole text's answer, or its error now: never at a function's first read (mixed line
        # breaks: the module's own would depend on which lines the skeleton keeps)
        return parse_module(text)
    lines = lines_of(text)
    outline = scan(text)
    if outline is None:
        try:
            outline = of_ast(python_ast(text), lines)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return parse_module(text)
    functions = outline.functions
    lazy: dict[int, tuple[str, str, str, int, tuple[tuple[str | None, bool], ...]]] = {}  # index -> `_DefSource`'s
    bodies: dict[int, str] = {}  # index -> the original lines of a body whose header the skeleton keeps
    kept: list[str] = []
    done = 0  # lines of `lines` already in `kept`
    for index, function in enumerate(functions):
        start, first, end = function.start, function.first, function.end
        header_end = first - 1
        while header_end > function.header and BLANK_OR_COMMENT.match(lines[header_end - 1]):
            header_end -= 1
        if function.inline or start <= done or end - start + 1 < MIN_LINES \
                or lines[end - 1].rstrip("\r\n").endswith("\\"):  # `def f(\n a,\n): return a`
            continue
        heads = function.heads
        # a decorator defined in the file runs at the definition, given the function (a registry's
        # `@register`), which reads its header: such a function's header is parsed with the skeleton
        registered = any(name in outline.own for name, _ in heads)
        if registered and end - header_end < MIN_LINES:
            continue
        last = lines[end - 1]  # its line break, if any (the text's last line may have none)
        newline = last[len(last.rstrip("\r\n")):]
        body_indent = _INDENT.match(lines[first - 1]).group()  # type: ignore[union-attr]
        body = "".join(lines[header_end:end])
        if registered:
            kept += lines[done:header_end]
            bodies[index] = body
        else:
            header_line = lines[header_end - 1]
            header_newline = header_line[len(header_line.rstrip("\r\n")):]
            indent = _INDENT.match(lines[start - 1]).group()  # type: ignore[union-attr]
            kept += lines[done:start - 1]
            asynchronous = "async " if function.asynchronous else ""
            kept.append(f"{indent}{asynchronous}def {function.name}():{header_newline}")
            lazy[index] = ("".join(lines[start - 1:header_end]), body, body_indent, len(indent), heads)
        kept.append(f"{body_indent}...{newline}")
        done = end
    if not lazy and not bodies:
        return parse_module(text)
    kept += lines[done:]
    module = parse_module("".join(kept))
    places = list(_cst_functions(module))
    if len(places) != len(functions):
        return parse_module(text)
    stand_ins: list[tuple[cst.CSTNode, int, LazyFunctionDef]] = []
    for index, (header, body, body_indent, column, heads) in lazy.items():
        owner, position = places[index]
        stand_in = owner.body[position]  # type: ignore[attr-defined]
        if not _is_stand_in(stand_in, functions[index].name):
            return parse_module(text)
        source = _DefSource(header, body, body_indent, column, module.default_indent, module.default_newline, stand_in,
                            heads)
        stand_ins.append((owner, position, LazyFunctionDef.standing_in(stand_in, source)))
    for index, body in bodies.items():
        owner, position = places[index]
        function = owner.body[position]  # type: ignore[attr-defined]
        if not _is_placeholder(function.body):
            return parse_module(text)
        block = function.body
        # a tree fresh from the parser, which nothing else holds yet: the `def` gets the body it stands for
        object.__setattr__(function, "body", _rebuilt(block.header, block.indent, block.footer, None,
                                                      (body, module.default_indent, module.default_newline), block.body))
    # likewise, each stand-in's place gets the function it stands for
    for owner in {id(owner): owner for owner, _, _ in stand_ins}.values():
        statements = list(owner.body)  # type: ignore[attr-defined]
        for place_owner, position, function in stand_ins:
            if place_owner is owner:
                statements[position] = function
        object.__setattr__(owner, "body", tuple(statements))
    return module


def is_skeleton(module: cst.Module) -> bool:
    """Whether `module` is a skeleton with functions of its own to parse (then it is no document's tree)."""
    return any(isinstance(f, LazyFunctionDef) or isinstance(f.body, LazyBlock) for f in _functions(module))


def unparsed_bodies(module: cst.Module) -> int:
    """How many function bodies of `module`'s skeleton are not parsed yet."""
    return sum((isinstance(f, LazyFunctionDef) and not f.parsed) or (isinstance(f.body, LazyBlock) and not f.body.parsed)
               for f in _functions(module))


def _functions(module: cst.Module) -> Iterator[cst.FunctionDef]:
    return (owner.body[position] for owner, position in _cst_functions(module))  # type: ignore[attr-defined]


def _cst_functions(owner: cst.Module | cst.BaseSuite) -> Iterator[tuple[cst.Module | cst.IndentedBlock, int]]:
    """`_ast_functions` in libcst's tree: the same functions, in the same order, each as the
    module or block that holds it and its place there."""
    if type(owner) is not cst.Module and not isinstance(owner, cst.IndentedBlock):
        return  # a one-line suite (`class A: pass`) holds no function
    for position, statement in enumerate(owner.body):  # type: ignore[attr-defined]
        kind = type(statement)  # exact types: an `isinstance` of a libcst class is an ABC check
        if kind is cst.FunctionDef or kind is LazyFunctionDef:
            yield owner, position  # type: ignore[misc]
        elif kind is cst.ClassDef:
            yield from _cst_functions(statement.body)  # type: ignore[attr-defined]
        elif kind is cst.If:
            branch: cst.CSTNode | None = statement
            while type(branch) is cst.If:
                yield from _cst_functions(branch.body)  # type: ignore[attr-defined]
                branch = branch.orelse  # type: ignore[attr-defined]
            if branch is not None:
                yield from _cst_functions(branch.body)  # type: ignore[attr-defined]
        elif kind in (cst.For, cst.While, cst.With):
            yield from _cst_functions(statement.body)  # type: ignore[attr-defined]
            orelse = getattr(statement, "orelse", None)
            if orelse is not None:
                yield from _cst_functions(orelse.body)
        elif kind in (cst.Try, cst.TryStar):
            yield from _cst_functions(statement.body)  # type: ignore[attr-defined]
            for handler in statement.handlers:  # type: ignore[attr-defined]
                yield from _cst_functions(handler.body)
            for part in (statement.orelse, statement.finalbody):  # type: ignore[attr-defined]
                if part is not None:
                    yield from _cst_functions(part.body)


def _is_stand_in(function: cst.CSTNode, name: str) -> bool:
    """Whether `function` is the skeleton's `def name():` with a `...` body."""
    return type(function) is cst.FunctionDef and function.name.value == name and not function.decorators \
        and not function.params.params and function.params.star_arg is cst.MaybeSentinel.DEFAULT \
        and _is_placeholder(function.body)


def _is_placeholder(block: cst.BaseSuite) -> bool:
    """Whether `block` is the skeleton's `...` body."""
    if type(block) is not cst.IndentedBlock or len(block.body) != 1:  # type: ignore[attr-defined]
        return False
    line = block.body[0]  # type: ignore[attr-defined]
    return type(line) is cst.SimpleStatementLine and len(line.body) == 1 and type(line.body[0]) is cst.Expr \
        and type(line.body[0].value) is cst.Ellipsis and not line.leading_lines
