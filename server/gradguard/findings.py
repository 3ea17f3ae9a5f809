"""The one vocabulary every adapter speaks: findings, their related locations and fixes.

Lines are 1-based; columns are 0-based code-point offsets (adapters convert them to
1-based code points for JSON, UTF-16 for LSP).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Severity(str, Enum):
    """How sure we are that the program will fail."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def at_least(self, other: Severity) -> bool:
        """Whether this severity is `other` or graver (an error is at least a warning)."""
        order = list(Severity)
        return order.index(self) <= order.index(other)


@dataclass(frozen=True, order=True)
class Position:
    """A place in a file: 1-based line, 0-based code-point column."""

    line: int
    column: int


@dataclass(frozen=True)
class Span:
    """A range of text in one file; in a notebook, in one of its cells: `cell` (1-based, among
    all its cells), with lines counted from the cell's first."""

    start: Position
    end: Position
    cell: int | None = None


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding (the op that saved the tensor, the leaf's creation)."""

    filename: str
    span: Span
    message: str


@dataclass(frozen=True)
class Edit:
    """Replace the text of `span` with `content`."""

    span: Span
    content: str


class Applicability(str, Enum):
    """Whether a fix keeps every value (safe) or may change them (unsafe)."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Fix:
    """A set of edits that removes the problem."""

    message: str
    applicability: Applicability
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Finding:
    """One diagnostic of one rule at one place."""

    code: str
    severity: Severity
    message: str
    filename: str
    span: Span
    related: tuple[Related, ...] = ()
    fixes: tuple[Fix, ...] = field(default=())
    aten_op: str | None = None  # the ATen operator that saved the tensor: for tools (JSON), never in the message
