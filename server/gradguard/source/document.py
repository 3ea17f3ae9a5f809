"""A source file: its text, its libcst tree (or the syntax error), and positions on demand.

Positions come from libcst's `PositionProvider`, computed only for files that have something
to report: most files have nothing, and the position pass costs as much as the parse.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ast
import re

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.findings import Position, Span


_MAX_BRACKET_DEPTH = 200  # CPython's own limit on nested parentheses
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")


def _bracket_depth(text: str) -> int:
    """The deepest bracket nesting in `text` (strings and comments included: an upper bound)."""
    depth = deepest = 0
    for char in _NOT_BRACKETS.sub("", text):
        depth = depth + 1 if char in "([{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


def _python_syntax_problem(text: str) -> SyntaxProblem | None:
    """Where CPython places the syntax error (libcst points at the token after it)."""
    try:
        ast.parse(text)
    except SyntaxError as error:
        line = max(error.lineno or 1, 1)
        return SyntaxProblem(error.msg, Position(line, max((error.offset or 1) - 1, 0)))
    except (ValueError, RecursionError, MemoryError) as error:
        return SyntaxProblem(str(error), Position(1, 0))
    return None


@dataclass(frozen=True)
class SyntaxProblem:
    """Why a file could not be parsed, and where."""

    message: str
    position: Position


@dataclass
class Document:
    """One file's text and tree."""

    filename: str
    text: str
    module: cst.Module | None = None
    syntax_problem: SyntaxProblem | None = None
    _positions: dict[cst.CSTNode, object] | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, filename: str, text: str, module: cst.Module | None = None) -> Document:
        """Parse `text` (unless its tree `module` is given); a syntax error becomes `syntax_problem`."""
        if module is not None:
            return cls(filename, text, module=module)
        if _bracket_depth(text) > _MAX_BRACKET_DEPTH:  # libcst's native parser crashes on these
            return cls(filename, text, syntax_problem=_python_syntax_problem(text) or SyntaxProblem(
                "too many nested parentheses", Position(1, 0)))
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError as error:
            fallback = SyntaxProblem(error.message.splitlines()[0] if error.message else "invalid syntax",
                                     Position(max(error.raw_line, 1), max(error.raw_column, 0)))
            return cls(filename, text, syntax_problem=_python_syntax_problem(text) or fallback)
        except (RecursionError, ValueError, MemoryError) as error:
            return cls(filename, text, syntax_problem=SyntaxProblem(f"cannot parse: {error}", Position(1, 0)))
        return cls(filename, text, module=module)

    def span(self, node: cst.CSTNode) -> Span:
        """The exact range of `node` (1-based lines, 0-based code-point columns)."""
        if self._positions is None:
            assert self.module is not None
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = dict(wrapper.resolve(PositionProvider))
        code_range = self._positions[node]
        return Span(Position(code_range.start.line, code_range.start.column),
                    Position(code_range.end.line, code_range.end.column))

    def code(self, node: cst.CSTNode) -> str:
        """The source text of `node`, on one line."""
        assert self.module is not None
        return " ".join(self.module.code_for_node(node).split())

    def line_text(self, line: int) -> str:
        lines = self.text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""
