"""In-place changes a program reaches only once an earlier one is fixed: PyTorch raised at an
earlier change of the same block.

PyTorch raises its leaf error (GG002) and its view errors (GG003) at the in-place op itself. Where
that is sure (the op runs whenever its statement does, the error holds for every value the analysis
found, and none came from a parameter's default), the statements after it in the same block, and
what they contain, do not run in that call (nor in a loop's later passes): a second gate activated in place after the first one raised (`ingate.sigmoid_()`, then
`forgetgate.sigmoid_()`), the `clamp_` after a leaf's `add_`, and the changes inside the calls those
statements make (`project_(x_adv)` after `x_adv += step`). Their changes are marked
(`InplaceChange.raised_first`), and what a rule finds at them is information, not a warning: the
program as it is never runs them, but once the first is fixed they may be next.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterable

import libcst as cst

from gradguard.analysis.events import InplaceChange
from gradguard.findings import Finding, Severity
from gradguard.rules import RULES, gg002_leaf_modified, gg003_multi_output_view_modified
from gradguard.rules.base import RuleContext
from gradguard.source.walk import children, descendants, in_statements

__all__ = ["mark_raised_first", "reached_later"]

# an op under these may not run when its statement does
_CONDITIONAL = frozenset({cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
                          cst.GeneratorExp})
_SCOPES = (cst.FunctionDef, cst.ClassDef)
Place = tuple[cst.CSTNode, int, cst.CSTNode | None]  # a statement's block, its index there, the statement holding the block


def mark_raised_first(changes: list[InplaceChange], module: cst.Module | None,
                      selected: Callable[[str], bool]) -> None:
    """Mark each change that follows, in the same block of the same call, a change where PyTorch
    surely raises, and which a `selected` rule reports (else the reason would not be shown)."""
    lines: dict[int, dict[int, cst.SimpleStatementLine]] = {}
    raising = [order for order, change in enumerate(changes) if change.assumes is None
               and _no_defaults(change.scopes[0] if change.scopes else None) and _raises(change, selected)
               and _always_runs(change, _statement(change, lines))]
    if not raising or module is None:
        return
    places = _places(module)
    for order in raising:
        first = changes[order]
        block, index, _ = places.get(_statement(first, lines), (None, -1, None))  # type: ignore[arg-type]
        if block is None:
            continue
        depth = len(first.call_chain)
        for change in changes[order + 1:]:  # in the order the analysis met them: a loop's later passes after
            if change.raised_first is not None or change.call_chain[:depth] != first.call_chain \
                    or change.scopes[:depth + 1] != first.scopes[:depth + 1]:
                continue
            statement = _statement(change, lines) if change.call_chain == first.call_chain \
                and change.scopes == first.scopes else None
            if (statement is not None and _after(statement, block, index, places)) \
                    or (len(change.call_chain) > depth and _called_after(change.call_chain[depth], block, index)):
                change.raised_first = first.node


def _statement(change: InplaceChange, lines: dict[int, dict[int, cst.SimpleStatementLine]]
               ) -> cst.SimpleStatementLine | None:
    """The statement `change` happens in: its own, or (in a called function) the line of its
    function that holds its node (`lines`: each function's, found once)."""
    if change.statement is not None or change.scope is None:
        return change.statement
    scope = change.scope
    if id(scope) not in lines:
        lines[id(scope)] = {id(node): line for line in descendants(scope.body)
                            if isinstance(line, cst.SimpleStatementLine) for node in descendants(line)}
    return lines[id(scope)].get(id(change.node))


def reached_later(context: RuleContext, findings: Iterable[Finding]) -> list[Finding]:
    """`findings`, those at a change reached only where it is marked `raised_first` (or where no rule
    reports it) as information that says where PyTorch raises first."""
    if all(change.raised_first is None for change in context.changes):
        return list(findings)
    reached = {id(change.node) for change in context.changes if change.raised_first is None and any(
        rule.dropped(change) is None for rule in RULES if rule.dropped is not None)}  # (one under no_grad: none)
    first: dict[tuple[int, int], tuple[cst.CSTNode, cst.FunctionDef | None]] = {}
    for change in context.changes:
        if change.raised_first is not None and id(change.node) not in reached:
            try:
                span = context.document.span(change.node, change.scope)
            except KeyError:  # a node no longer in the document's blocks: it has no finding to mark
                continue
            first[(span.start.line, span.start.column)] = (change.raised_first, change.scope)
    if not first:
        return list(findings)
    kept = []
    for finding in findings:
        unreached = first.get((finding.span.start.line, finding.span.start.column)) if finding.code != "GG000" else None
        if unreached is not None:
            raised, scope = unreached
            where = context.where(raised, scope=scope)
            finding = replace(finding, severity=Severity.INFO, message=(
                f"{finding.message} Not reached yet: PyTorch raises first at `{context.code(raised)}` ({where}), "
                "earlier in the block; this runs once that is fixed."))
        kept.append(finding)
    return kept


def _raises(change: InplaceChange, selected: Callable[[str], bool]) -> bool:
    return (selected(gg002_leaf_modified.CODE) and gg002_leaf_modified.raises_surely(change)) or \
        (selected(gg003_multi_output_view_modified.CODE) and gg003_multi_output_view_modified.raises_surely(change))


def _no_defaults(entry: cst.FunctionDef | None) -> bool:
    """Whether the entry point the analysis ran from takes no parameter with a default: what it
    found for a default's value (a tensor that requires grad) may not hold for a caller's."""
    if entry is None:
        return True
    params = entry.params
    return all(param.default is None for param in (*params.posonly_params, *params.params, *params.kwonly_params))


def _always_runs(change: InplaceChange, statement: cst.SimpleStatementLine | None) -> bool:
    """Whether the changing op runs whenever its `statement` does (not under `a if c else b`, `and`...)."""
    return statement is not None and any(
        node is change.node for node in descendants(statement, into=lambda node: type(node) not in _CONDITIONAL))


def _after(statement: cst.CSTNode, block: cst.CSTNode, index: int, places: dict[cst.CSTNode, Place]) -> bool:
    """Whether `statement` is, or lies inside, a statement of `block` after its `index`-th."""
    current: cst.CSTNode | None = statement
    while current is not None and (place := places.get(current)) is not None:
        holder, position, owner = place
        if holder is block:
            return position > index
        current = owner if not isinstance(owner, _SCOPES) else None
    return False


def _called_after(call: cst.CSTNode, block: cst.CSTNode, index: int) -> bool:
    """Whether the call `call` (which led into the function a change is in) lies in a statement of
    `block` after its `index`-th (not in a function or class it defines)."""
    statements = getattr(block, "body", ())[index + 1:]
    return any(node is call for statement in statements
               for node in descendants(statement, into=lambda node: not isinstance(node, (*_SCOPES, cst.Lambda))))


def _places(module: cst.Module) -> dict[cst.CSTNode, Place]:
    """Each statement of `module` (nested ones too): its block, its index there, the compound
    statement holding that block (None at the module level)."""
    places: dict[cst.CSTNode, Place] = {}
    pending: list[tuple[cst.CSTNode, cst.CSTNode | None]] = [(module, None)]
    while pending:
        node, owner = pending.pop()
        if isinstance(node, (cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite)):
            for index, statement in enumerate(node.body):
                places[statement] = (node, index, owner)
                if not isinstance(statement, cst.SimpleStatementLine):
                    pending.append((statement, statement))
        else:
            pending += [(child, owner) for child in children(node) if in_statements(child)]
    return places
