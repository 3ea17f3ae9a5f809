"""A source file: its text, its libcst tree (or the syntax error), and positions on demand.

Positions (`positions.py`) are computed only for files that have something to report: most
files have nothing, and the position pass costs as much as the parse.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import libcst as cst

from gradguard.findings import Position, Span
from gradguard.source.files import TooLarge
from gradguard.source.lines import lines_of
from gradguard.source.parser import TooDeeplyNested, parse_module, skipped
from gradguard.source.positions import WholeModule
from gradguard.source.syntax import SyntaxProblem, failed_at, python_syntax_problem


MAX_CHARACTERS = 2_000_000  # larger files are not analysed (every adapter), long literals not counted


def too_large(text: str) -> SyntaxProblem | None:
    """Why `text` is not analysed for its size, if it is too large: the parsers' cost is in the
    characters they see, which long literals and chains are not (`parser.skipped`)."""
    if len(text) <= MAX_CHARACTERS:
        return None
    parsed = len(text) - sum(end - start for start, end in skipped(text))
    if parsed <= MAX_CHARACTERS:
        return None
    counted = f"{len(text):,} characters" if parsed == len(text) else \
        f"{parsed:,} characters besides its long literals"
    return SyntaxProblem(f"it has {counted}, over the limit of {MAX_CHARACTERS:,}", Position(1, 0), skipped=True)


@dataclass
class Document:
    """One file's text and tree.

    An open document kept as blocks (`blocks.py`) may have both a tree and a syntax problem: the
    lines in `stale_lines` did not parse, their last good tree stands in for them, and `locator`
    places nodes block by block.
    """

    filename: str
    text: str
    module: cst.Module | None = None
    syntax_problem: SyntaxProblem | None = None
    stale_lines: tuple[tuple[int, int], ...] = ()
    locator: Callable[[cst.CSTNode, cst.CSTNode | None], Span] | None = field(default=None, repr=False)
    parse_seconds: float = 0.0  # CPU time the parse took: part of the file's budget
    _positions: WholeModule | None = field(default=None, repr=False)
    _lines: list[str] | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, filename: str, text: str, module: cst.Module | None = None) -> Document:
        """Parse `text` (unless its tree `module` is given); a syntax error becomes `syntax_problem`."""
        if module is not None:
            return cls(filename, text, module=module)
        if (problem := too_large(text)) is not None:
            return cls(filename, text, syntax_problem=problem)
        start = time.process_time()
        try:
            module = parse_module(text)
        except TooDeeplyNested as error:
            return cls(filename, text, syntax_problem=python_syntax_problem(text) or SyntaxProblem(
                str(error), Position(1, 0)))
        except cst.ParserSyntaxError as error:
            fallback = SyntaxProblem(error.message.splitlines()[0] if error.message else "invalid syntax",
                                     Position(max(error.raw_line, 1), max(error.raw_column, 0)))
            return cls(filename, text, syntax_problem=python_syntax_problem(text) or fallback)
        except (RecursionError, ValueError, MemoryError) as error:
            return cls(filename, text, syntax_problem=SyntaxProblem(f"cannot parse: {error}", failed_at(error, text)))
        return cls(filename, text, module=module, parse_seconds=time.process_time() - start)

    @classmethod
    def unreadable(cls, filename: str, error: Exception) -> Document:
        """A file whose text could not be read (permissions, encoding), or was not, for its size."""
        message = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        if isinstance(error, TooLarge):
            return cls(filename, "", syntax_problem=SyntaxProblem(message, Position(1, 0), skipped=True))
        return cls(filename, "", syntax_problem=SyntaxProblem(message, Position(1, 0), unreadable=True))

    def span(self, node: cst.CSTNode, scope: cst.CSTNode | None = None) -> Span:
        """The exact range of `node` (1-based lines, 0-based code-point columns); `scope`, the
        function it is likely in, makes a block-by-block locator look there first."""
        if self.locator is not None:
            return self.locator(node, scope)
        if self._positions is None:
            assert self.module is not None
            self._positions = WholeModule(self.module)
        return self._positions.span(node)

    def code(self, node: cst.CSTNode) -> str:
        """The source text of `node`, on one line."""
        assert self.module is not None
        return " ".join(self.module.code_for_node(node).split())

    def is_stale(self, line: int) -> bool:
        """Whether `line` lies in a block that no longer parses (analysed as it last parsed)."""
        return any(first <= line <= last for first, last in self.stale_lines)

    def line_text(self, line: int) -> str:
        if self._lines is None:  # without their ends
            self._lines = self.text.split("\n") if "\r" not in self.text else \
                [text.rstrip("\r\n") for text in lines_of(self.text)]
        return self._lines[line - 1] if 0 < line <= len(self._lines) else ""
