"""A source file: its text, its libcst tree (or the syntax error), and positions on demand.

Positions come from libcst's `PositionProvider`, computed only for files that have something
to report: most files have nothing, and the position pass costs as much as the parse.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.findings import Position, Span


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
    def parse(cls, filename: str, text: str) -> Document:
        """Parse `text`; a syntax error becomes `syntax_problem`, never an exception."""
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError as error:
            line = max(error.raw_line, 1)
            return cls(filename, text, syntax_problem=SyntaxProblem(
                error.message.splitlines()[0] if error.message else "invalid syntax",
                Position(line, max(error.raw_column, 0))))
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
