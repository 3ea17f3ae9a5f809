"""Fixes for the findings only the run made: the static rules' edit builders, applied to the line
the run points at when that line has a shape they rewrite (`y += 1`, `x.add_(y)`,
`nn.ReLU(inplace=True)`, a leaf changed outside `torch.no_grad()`).

The run does not know whether another name shares the changed tensor, so an out-of-place rewrite
is offered as unsafe, as the static rules offer it when one does; the other fixes keep the
applicability the rules give them.
"""

from __future__ import annotations

import libcst as cst

from gradguard.findings import Applicability, Finding, Fix
from gradguard.fixes.edits import drop_inplace_argument, out_of_place_augmented, out_of_place_method, wrap_in_no_grad
from gradguard.source.document import Document
from gradguard.verify.protocol import LEAF, SAVED, VIEW


class _OnLine(cst.CSTVisitor):
    """The statement line covering `line`, its calls that cover it too, and the name `torch` is imported as."""

    def __init__(self, document: Document, line: int) -> None:
        self.document, self.line = document, line
        self.statement: cst.SimpleStatementLine | None = None
        self.calls: list[cst.Call] = []
        self.torch_name: str | None = None
        self._inside = False

    def _covers(self, node: cst.CSTNode) -> bool:
        span = self.document.span(node)
        return span.start.line <= self.line <= span.end.line

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if self.torch_name is None and self.document.code(alias.name).strip() == "torch":
                asname = alias.asname.name if alias.asname is not None else None
                self.torch_name = asname.value if isinstance(asname, cst.Name) else "torch"

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        self._inside = self.statement is None and self._covers(node)
        if self._inside:
            self.statement = node
        return self._inside or isinstance(node.body[0], cst.Import)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._inside = False

    def visit_Call(self, node: cst.Call) -> None:
        if self._inside and self._covers(node):
            self.calls.append(node)


def runtime_fixes(document: Document, finding: Finding) -> tuple[Fix, ...]:
    """The fixes the static rule would offer at `finding`'s line, where the line's shape allows."""
    if document.module is None or finding.code not in (SAVED, LEAF, VIEW):
        return ()
    found = _OnLine(document, finding.span.start.line)
    document.module.visit(found)
    statement = found.statement
    if statement is None:
        return ()
    offered: list[Fix] = []
    if finding.code == LEAF:
        if found.torch_name is not None:
            offered.append(Fix("Wrap in `with torch.no_grad():`", Applicability.SAFE,
                               wrap_in_no_grad(document, statement, found.torch_name)))
        return tuple(offered)
    for call in found.calls:
        dropped = drop_inplace_argument(document, call)
        if dropped is not None:
            return (Fix("Remove `inplace=True`", Applicability.UNSAFE, dropped),)
    receiver = None
    if len(statement.body) == 1 and isinstance(statement.body[0], cst.Expr):
        call = statement.body[0].value
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
            receiver = call.func.value
    rewrite = out_of_place_augmented(document, statement) or out_of_place_method(document, statement, receiver)
    if rewrite is not None:
        offered.append(Fix(f"Rewrite out of place: `{rewrite[0].content}`", Applicability.UNSAFE, rewrite))
    return tuple(offered)
