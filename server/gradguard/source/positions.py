"""The one place positions come from: libcst's `PositionProvider`, run over a whole module or
over one block of it, as 1-based lines and 0-based code-point columns.

It costs a full pass over the tree it is given, so it runs only when a finding needs a
position, and over as little as possible: `blocks.py` resolves one top-level block at a time.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.findings import Position, Span


def spans_of(module: cst.Module, anchor: cst.CSTNode | None = None,
             skip: cst.CSTNode | None = None) -> dict[cst.CSTNode, Span]:
    """The range of every node of `module` but `skip`; with `anchor`, lines count from the
    line where `anchor` starts (line 0), for a block placed later wherever it has moved."""
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    shift = -positions[anchor].start.line if anchor is not None else 0
    return {node: Span(Position(r.start.line + shift, r.start.column), Position(r.end.line + shift, r.end.column))
            for node, r in positions.items() if node is not skip}


class WholeModule:
    """The positions of one module's nodes, computed for all of them at the first question."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._spans: dict[cst.CSTNode, Span] | None = None

    def span(self, node: cst.CSTNode) -> Span:
        """The range of `node` (KeyError for a node of another tree)."""
        if self._spans is None:
            self._spans = spans_of(self.module)
        return self._spans[node]

    def get(self, node: cst.CSTNode) -> Span | None:
        """The range of `node`, or None for a node of another tree."""
        try:
            return self.span(node)
        except KeyError:
            return None
