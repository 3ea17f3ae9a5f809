"""What the analysis believes at one line, printed: the value each name there holds and, for each
in-place change there, why each rule reported it or not — the facts the rules read, as pyright's
`reveal_type` prints what the checker believes. `describe_value` is also what a hover shows."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradguard.analysis.events import InplaceChange, ScopeResult, Seen
from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentValue,
    ConstValue,
    DictValue,
    DistributionValue,
    IntValue,
    NumberValue,
    LostValue,
    ModuleValue,
    OptimizerValue,
    ParametersValue,
    SavedRecord,
    SequenceValue,
    StringPattern,
    TensorValue,
    Tri,
    Value,
)
from gradguard.analysis.project import ProjectIndex
from gradguard.config import Settings
from gradguard.engine import analyse_with_values, silenced
from gradguard.findings import Finding
from gradguard.source.document import Document
from gradguard.rules import RULES
from gradguard.rules.base import NotReported, RuleContext

_REQUIRES_GRAD = {Tri.YES: "requires grad", Tri.NO: "does not require grad", Tri.MAYBE: "may require grad"}


@dataclass(frozen=True)
class SaveFacts:
    """One save of a tensor for backward: the op, what it saved, where, and whether for certain."""

    saved_by: str
    what: str
    at: str
    certain: bool


@dataclass(frozen=True)
class ValueFacts:
    """An abstract value in a user's words. `kind`: tensor, number, bool, string, None, argument (a
    parameter of unknown type), tuple, list, dict, module, object, optimizer, parameters,
    distribution or unknown; `summary`: where a tensor came from, what any other value is;
    `notes`: what follows from it. A tensor's facts are None for any other kind: `graph` is known
    (`saves_in_graph` saves in its provenance), empty (known, no save) or unknown (computed from
    values the analysis lost); `saved`: the live saves of its version counter; `aliases`: the other
    names of the function holding a tensor of that version counter (its alias class)."""

    kind: str
    summary: str
    notes: tuple[str, ...]
    requires_grad: str | None = None
    is_leaf: bool | None = None
    graph: str | None = None
    saves_in_graph: int | None = None
    saved: tuple[SaveFacts, ...] = ()
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class NameFacts:
    """A name on the explained line (its 1-based column) and the value it holds there."""

    name: str
    column: int
    value: ValueFacts


@dataclass(frozen=True)
class Verdict:
    """One rule's verdict on a change: its finding's severity and message, or why it dropped the
    change (`reason`: a `NotReported` name, `message`: its words)."""

    code: str
    reported: bool
    message: str
    severity: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class ChangeFacts:
    """An in-place change at the line, as the rules read it."""

    column: int
    verb: str
    target: str
    grad_enabled: str
    saved: tuple[SaveFacts, ...]
    backward_follows: str
    backward_at: str | None
    freed_by: str | None
    dies_in: str | None  # the entry point whose return ends the graph holding the saves it meets
    called_from: tuple[str, ...]
    verdicts: tuple[Verdict, ...]
    assumes: str | None = None  # the parameter whose default skips the branch it is on (no caller is known)


@dataclass(frozen=True)
class Explanation:
    """`explain`'s answer for one line of a file."""

    filename: str
    line: int
    source: str
    names: tuple[NameFacts, ...]
    changes: tuple[ChangeFacts, ...]


def describe_value(context: RuleContext, name: cst.Name, scope: dict[cst.Name, Seen]) -> ValueFacts | None:
    """The facts of the value `name` holds where it stands, in the words a user reads (None for a
    value nothing describes); `scope`: what the names of its function (or of the module-level
    code) held, `name` among them."""
    seen = scope[name]
    value = seen.value
    if isinstance(value, TensorValue):
        return _tensor_facts(context, value, seen.saved, _aliases(name.value, value, scope))
    described = _other_value(value)
    if described is None:
        return None
    kind, summary, notes = described
    return ValueFacts(kind, summary, notes)


def change_notes(context: RuleContext, name: cst.Name) -> tuple[str, ...]:
    """For each distinct in-place change of the tensor `name` holds, made through `name` itself,
    which rules report it, or why none does (each rule's `dropped`; `# noqa` and the settings aside)."""
    notes: list[str] = []
    for change in context.changes:
        if change.target_node is not name:
            continue
        dropped = [(rule.code, rule.dropped(change)) for rule in RULES if rule.dropped is not None]
        reporting = [code for code, reason in dropped if reason is None]
        if reporting:
            note = f"changed in place here: reported by {', '.join(reporting)}"
        else:
            note = "changed in place here, not reported: " + "; ".join(
                f"{code}: {_reason_text(context, change, reason)}" for code, reason in dropped if reason is not None)
        if note not in notes:
            notes.append(note)
    return tuple(notes)


def _tensor_facts(context: RuleContext, tensor: TensorValue, saved: tuple[SavedRecord, ...],
                  aliases: tuple[str, ...]) -> ValueFacts:
    origin = tensor.origin.description
    if origin.startswith("`"):  # a factory's name
        origin = f"made by {origin}"
    if tensor.origin.node is not None:
        origin += f" ({context.where(tensor.origin.node)})"
    graph = "unknown" if not tensor.graph_known else "known" if tensor.history else "empty"
    in_graph = {"unknown": "graph unknown (computed from values the analysis lost)", "empty": "graph known: empty",
                "known": f"graph known: {len(tensor.history)} save{'s' if len(tensor.history) != 1 else ''}"}[graph]
    kind = "a leaf" if tensor.is_leaf else "not a leaf"
    notes = [f"{_REQUIRES_GRAD[tensor.requires_grad]}; {kind}; {in_graph}"]
    if tensor.is_leaf and tensor.requires_grad is Tri.YES:
        notes.append("a leaf that requires grad: changing it in place outside `torch.no_grad()` raises")
    if tensor.view_of_leaf:
        notes.append("a view of a leaf that requires grad: changing it in place raises")
    if tensor.multi_output_view:
        notes.append(f"one of the views `{tensor.multi_output_view}` returns: changing it in place raises")
    if tensor.function_view:
        notes.append(f"a view the custom autograd Function `{tensor.function_view}` returned (or a view of one): "
                     "changing it in place raises")
    if tensor.no_grad_view:
        notes.append("a view made under `no_grad`: changing it in place with grad on raises" if tensor.requires_grad
                     is not Tri.NO else "a view made under `no_grad`: writing a value that requires grad into it "
                     "with grad on raises")
    if tensor.storage_of is not None:
        notes.append("shares its memory with another tensor but not its version counter (`.data`, "
                     "`unsafe_*`): autograd does not see changes made through it")
    if not tensor.alias_certain:
        notes.append("may be an alias of the tensor it was made from (`contiguous()`, `to()` return their "
                     "input when nothing needs to change)")
    plain = len(notes) == 1  # neither a leaf nor a view of any kind
    if aliases:
        notes.append(f"shares its version counter with {', '.join(f'`{a}`' for a in aliases)}: "
                     "an in-place change of one is a change of all")
    saves = tuple(_save_facts(context, record) for record in saved)
    for record, facts in zip(saved, saves):
        maybe = "" if record.certain else " (if the tensors it got require grad)"
        notes.append(f"saved for backward{maybe}: its {record.what} by `{record.saved_by}` "
                     f"({facts.at}); an in-place change before that backward raises")
    if not saved and plain and tensor.requires_grad is not Tri.NO:
        notes.append("nothing has saved it for backward here: changing it in place here leaves backward intact")
    return ValueFacts("tensor", origin, tuple(notes), tensor.requires_grad.value, tensor.is_leaf,
                      graph, len(tensor.history) if tensor.graph_known else None, saves, aliases)


def _save_facts(context: RuleContext, record: SavedRecord) -> SaveFacts:
    return SaveFacts(record.saved_by, record.what, context.where(record.node, record.file, record.scope),
                     record.certain)


def _other_value(value: Value) -> tuple[str, str, tuple[str, ...]] | None:
    """(kind, summary, notes) of a value that is not a tensor."""
    untracked = ("not a tensor: autograd never sees it, and an in-place operator on it rebinds the name",)
    if isinstance(value, ConstValue):
        if isinstance(value.value, bool):
            return "bool", f"a Python bool: {value.value}", untracked
        if isinstance(value.value, (int, float, complex)):
            return "number", f"a Python number: {value.value!r}", untracked
        if isinstance(value.value, str):
            return "string", f"a string: {value.value!r}", ()
        if value.value is None:
            return "None", "`None`", ()
        return None
    if isinstance(value, IntValue):
        return "number", "a Python integer whose value is not known (a loop index, a length)", untracked
    if isinstance(value, NumberValue):
        return "number", "a Python number whose value is not known (`float(...)` of a setting)", untracked
    if isinstance(value, StringPattern):
        return "string", "a string built at run time", ()
    if isinstance(value, ArgumentValue):
        return "argument", "a parameter no known caller gives: its type is not known", (
            "used as a tensor, it is taken for one that may require grad",)
    if isinstance(value, SequenceValue):
        kind = "list" if value.mutable else "tuple"
        size = f" of {len(value.items)} values" if value.repeated is None and value.known_length else ""
        return kind, f"a {kind}{size}", ()
    if isinstance(value, DictValue):
        return "dict", "a dict", ()
    if isinstance(value, ModuleValue):
        if not value.is_module:
            return "object", f"an instance of `{value.class_name}`", ()
        return "module", f"an `nn.Module`: `{value.class_name}`", (
            f"parameters that require grad: {value.has_trainable_parameters().value}",)
    if isinstance(value, OptimizerValue):
        return "optimizer", f"a `torch.optim.{value.class_name}` optimizer of {len(value.parameters)} tensors", (
            "`step()` changes its parameters in place",)
    if isinstance(value, ParametersValue):
        return "parameters", f"the parameters of a module: {len(value.tensors)} tensors", ()
    if isinstance(value, DistributionValue):
        return "distribution", f"a `{value.class_name}` distribution", ()
    if isinstance(value, LostValue):
        return "unknown", "unknown: what a call the analysis did not follow returned", (
            f"a backward pass from it may reach the {len(value.history)} saves of the tensors passed to that call, "
            "and no others",)
    if value is UNKNOWN:
        return "unknown", "unknown: the analysis lost what it is (a call it could not follow, paths that disagree)", (
            "nothing is concluded from it: it causes no finding",)
    return None


def _aliases(name: str, tensor: TensorValue, scope: dict[cst.Name, Seen]) -> tuple[str, ...]:
    """The other names of `scope` that held a tensor of `tensor`'s version counter."""
    return tuple(sorted({node.value for node, other in scope.items() if node.value != name
                         and isinstance(other.value, TensorValue)
                         and other.value.version_counter == tensor.version_counter}))


def explain(document: Document, settings: Settings, project: ProjectIndex | None, line: int) -> Explanation:
    """What the analysis of `document` believes at `line` (1-based): the values of the names there
    and the verdicts of each rule on the in-place changes there."""
    document, result, findings = analyse_with_values(document, settings, project)
    if result is None:
        return Explanation(document.filename, line, document.line_text(line).rstrip("\r\n"), (), ())
    return _explained(RuleContext(document, result.changes, project, result.cuts), result, settings, findings, line)


def _explained(context: RuleContext, result: ScopeResult, settings: Settings, findings: list[Finding],
               line: int) -> Explanation:
    document = context.document
    names: list[NameFacts] = []
    for scope in (result.module_seen, *(unit.seen for unit in result.units.values())):
        for node in scope:
            span = document.span(node)
            if span.start.line == line and (facts := describe_value(context, node, scope)) is not None:
                names.append(NameFacts(node.value, span.start.column + 1, facts))
    names.sort(key=lambda facts: facts.column)
    changes: list[ChangeFacts] = []
    for change in result.changes:
        try:
            span = document.span(change.node, change.scope)
        except KeyError:
            continue
        if span.start.line == line:
            facts = _change_facts(context, change, span.start.column + 1, settings, findings)
            if facts not in changes:  # a loop's two passes, a function followed from two calls
                changes.append(facts)
    return Explanation(document.filename, line, document.line_text(line).rstrip("\r\n"),
                       tuple(_distinct(names)), tuple(changes))


def _distinct(names: list[NameFacts]) -> list[NameFacts]:
    """Each name once, unless it holds different values on the line (`x = x * 2`)."""
    kept: list[NameFacts] = []
    for facts in names:
        if not any(k.name == facts.name and k.value == facts.value for k in kept):
            kept.append(facts)
    return kept


def _change_facts(context: RuleContext, change: InplaceChange, column: int, settings: Settings,
                  findings: list[Finding]) -> ChangeFacts:
    line = context.document.span(change.node, change.scope).start.line
    verdicts = []
    for rule in RULES:
        if rule.dropped is None:
            continue
        reason = rule.dropped(change) or silenced(context.document, settings, rule.code, line)
        if reason is not None:
            verdicts.append(Verdict(rule.code, False, _reason_text(context, change, reason), reason=reason.name))
            continue
        found = next((f for f in findings if f.code == rule.code and f.span.start.line == line
                      and f.span.start.column == column - 1), None)
        verdicts.append(Verdict(rule.code, True, found.message if found is not None else "",
                                found.severity.value if found is not None else None))
    backward = change.backward_statement
    return ChangeFacts(
        column=column,
        verb=change.verb,
        target=context.code(change.target_node) if change.target_node is not None else "",
        grad_enabled=change.grad_enabled.value,
        saved=tuple(_save_facts(context, record) for record in (*change.saved, *change.storage_saved)),
        backward_follows=change.backward_follows.value,
        backward_at=_where(context, backward, change) if backward is not None else None,
        freed_by=_where(context, change.freed_by, change) if change.freed_by is not None else None,
        dies_in=change.dies_in.name.value if change.dies_in is not None else None,
        called_from=tuple(_where(context, node, change) for node in change.call_chain),
        verdicts=tuple(verdicts),
        assumes=change.assumes,
    )


def _where(context: RuleContext, node: cst.CSTNode, change: InplaceChange) -> str:
    try:
        return context.where(node, scope=change.scope)
    except KeyError:
        return "another file"


def _reason_text(context: RuleContext, change: InplaceChange, reason: NotReported) -> str:
    if reason is NotReported.FREED_BY_BACKWARD and change.freed_by is not None:
        statement = change.freed_by.body[0] if isinstance(change.freed_by, cst.SimpleStatementLine) else change.freed_by
        return (f"the backward pass came before it: `{context.code(statement)}` "
                f"({_where(context, change.freed_by, change)}) freed what was saved")
    return reason.value
