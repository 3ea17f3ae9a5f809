"""An imported file parsed as a skeleton: its function bodies parsed only when first needed.

A file read for the names it defines (`ProjectIndex`) runs its top level: imports, assignments,
class bodies, `def` headers. The bodies of its functions and methods run only when a call of the
importing file is followed into them, and most never are: a model file imports a dozen layers
from a package of sixty files. Yet parsing the bodies is most of libcst's cost of the file.

`parse_skeleton` finds every function of the top level, of class bodies and of top-level
compound statements with Python's own parser (`ast`, a tenth of libcst's time), has libcst parse
the text with each body of `MIN_LINES` lines or more replaced by one `...` line, and gives each of
those functions a `LazyBlock` as its body: its statements are parsed from the original lines at
the first read of `body`, and are then the same objects at every read. The tree's code is the
original text exactly (`Module.code`, and so libcst's positions, resolved over the whole tree,
are the original's): the header, indentation and footer of the block are those the skeleton
parsed, the statements those of the original lines.

A text `ast` does not accept, one whose lines `ast` may count differently (a lone carriage
return), or one whose skeleton libcst does not give back as expected is parsed whole.
"""

from __future__ import annotations

import ast
import re
import threading
from typing import Iterator, Sequence

import libcst as cst

from gradguard.source.lines import lines_of
from gradguard.source.parser import MAX_BRACKET_DEPTH, TooDeeplyNested, bracket_depth, parse_module, python_ast

__all__ = ["LazyBlock", "MIN_LINES", "is_skeleton", "parse_skeleton", "unparsed_bodies"]

MIN_LINES = 4  # a shorter body is parsed with the skeleton: its own parse would cost more than it saves
_BLANK_OR_COMMENT = re.compile(r"[ \t\f]*(?:#.*)?(?:\r\n|\n)?\Z")
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

    @classmethod
    def standing_in(cls, placeholder: cst.IndentedBlock, source: str, module: cst.Module) -> LazyBlock:
        """The block `placeholder` (the skeleton's `...` in `module`) stands in for: its statements
        those of `source`, the original lines of the body."""
        return _rebuilt(placeholder.header, placeholder.indent, placeholder.footer, None,
                        (source, module.default_indent, module.default_newline), placeholder.body)

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
    """libcst's tree of `text` with the bodies of its top-level functions and methods parsed
    when first read (raises what `parse_module` raises)."""
    if "\r" in text.replace("\r\n", "") or bracket_depth(text) > MAX_BRACKET_DEPTH:
        return parse_module(text)  # the whole text's answer, or its error now: never at a body's first read
    lines = lines_of(text)
    try:
        functions = list(_ast_functions(python_ast(text).body))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return parse_module(text)
    lazy: dict[int, str] = {}  # index among the functions -> the original lines of its body
    kept: list[str] = []
    done = 0  # lines of `lines` already in `kept`
    for index, function in enumerate(functions):
        first = min([function.body[0].lineno, *_decorator_lines(function.body[0])])
        header_end = first - 1
        while header_end > function.lineno and _BLANK_OR_COMMENT.match(lines[header_end - 1]):
            header_end -= 1
        end = function.end_lineno or first
        if header_end < function.lineno or header_end < done or end - header_end < MIN_LINES \
                or lines[end - 1].rstrip("\r\n").endswith("\\"):  # a last line continued past `ast`'s end
            continue
        last = lines[end - 1]  # its line break, if any (the text's last line may have none)
        newline = last[len(last.rstrip("\r\n")):]
        kept += lines[done:header_end]
        kept.append(_INDENT.match(lines[first - 1]).group() + "..." + newline)  # type: ignore[union-attr]
        lazy[index] = "".join(lines[header_end:end])
        done = end
    if not lazy:
        return parse_module(text)
    kept += lines[done:]
    module = parse_module("".join(kept))
    defined = list(_cst_functions(module.body))
    if len(defined) != len(functions):
        return parse_module(text)
    for index, source in lazy.items():
        placeholder = defined[index].body
        if not _is_placeholder(placeholder):
            return parse_module(text)
        # a tree fresh from the parser, which nothing else holds yet: its `def` gets the body it stands for
        object.__setattr__(defined[index], "body", LazyBlock.standing_in(placeholder, source, module))  # type: ignore[arg-type]
    return module


def is_skeleton(module: cst.Module) -> bool:
    """Whether `module` is a skeleton with bodies of its own to parse (then it is no document's tree)."""
    return any(isinstance(f.body, LazyBlock) for f in _cst_functions(module.body))


def unparsed_bodies(module: cst.Module) -> int:
    """How many function bodies of `module`'s skeleton are not parsed yet."""
    return sum(isinstance(f.body, LazyBlock) and not f.body.parsed for f in _cst_functions(module.body))


def _decorator_lines(statement: ast.stmt) -> list[int]:
    decorators = getattr(statement, "decorator_list", ())
    return [d.lineno for d in decorators]


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


def _suite(node: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    return node.body if isinstance(node, cst.IndentedBlock) else ()  # type: ignore[return-value]


def _cst_functions(statements: Sequence[cst.BaseStatement]) -> Iterator[cst.FunctionDef]:
    """`_ast_functions` in libcst's tree: the same functions, in the same order."""
    for statement in statements:
        kind = type(statement)  # exact types: an `isinstance` of a libcst class is an ABC check
        if kind is cst.FunctionDef:
            yield statement  # type: ignore[misc]
        elif kind is cst.ClassDef:
            yield from _cst_functions(_suite(statement.body))  # type: ignore[attr-defined]
        elif kind is cst.If:
            branch: cst.CSTNode | None = statement
            while type(branch) is cst.If:
                yield from _cst_functions(_suite(branch.body))  # type: ignore[attr-defined]
                branch = branch.orelse  # type: ignore[attr-defined]
            if branch is not None:
                yield from _cst_functions(_suite(branch.body))  # type: ignore[attr-defined]
        elif kind in (cst.For, cst.While, cst.With):
            yield from _cst_functions(_suite(statement.body))  # type: ignore[attr-defined]
            orelse = getattr(statement, "orelse", None)
            if orelse is not None:
                yield from _cst_functions(_suite(orelse.body))
        elif kind in (cst.Try, cst.TryStar):
            yield from _cst_functions(_suite(statement.body))  # type: ignore[attr-defined]
            for handler in statement.handlers:  # type: ignore[attr-defined]
                yield from _cst_functions(_suite(handler.body))
            for part in (statement.orelse, statement.finalbody):  # type: ignore[attr-defined]
                if part is not None:
                    yield from _cst_functions(_suite(part.body))


def _is_placeholder(block: cst.BaseSuite) -> bool:
    """Whether `block` is the skeleton's `...` body."""
    if type(block) is not cst.IndentedBlock or len(block.body) != 1:  # type: ignore[attr-defined]
        return False
    line = block.body[0]  # type: ignore[attr-defined]
    return type(line) is cst.SimpleStatementLine and len(line.body) == 1 and type(line.body[0]) is cst.Expr \
        and type(line.body[0].value) is cst.Ellipsis and not line.leading_lines
