"""What a rule sees (`RuleContext`) and what it is (`Rule`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator

import libcst as cst

from gradguard import rule_url
from gradguard.rule_docs import rule_page
from gradguard.analysis.command_line import COMMAND_LINE
from gradguard.analysis.events import PICKED_CODE, Cut, InplaceChange
from gradguard.analysis.values import SavedRecord
from gradguard.analysis.project import ProjectIndex
from gradguard.findings import Finding, Fix, Related, Severity, Span
from gradguard.source.document import Document


def assumption(change: InplaceChange) -> str:
    """What a change found on a branch a default skips (a parameter's, an environment variable's), or
    in one of several functions a value not known picks, holds for."""
    if change.assumes == PICKED_CODE:
        return "only when the function picked by a value not known here is the one that runs this code"
    if change.assumes is not None and change.assumes.startswith(COMMAND_LINE):
        return f"only when the script is run with `{change.assumes.removeprefix(COMMAND_LINE)}` set to another " \
               "value than its default"
    if change.assumes is not None and change.assumes.startswith("$"):
        return f"only when the environment variable `{change.assumes[1:]}` is set to another value than its default"
    return f"only when `{change.assumes}` is given a value other than its default; {standalone(change)}"


def standalone(change: InplaceChange) -> str:
    """Why a change found analysing a function on its own is reported: what its callers give is not known."""
    function = change.standalone_of.name.value if change.standalone_of is not None else "the function"
    if change.called_with_unknown_keywords:
        return f"found analysing `{function}` on its own: its callers give it keywords not known (`**`)"
    return f"found analysing `{function}` on its own: no caller of it is known"


class NotReported(Enum):
    """Why a rule leaves an in-place change unreported: each rule's `dropped(change)` returns it
    where its check drops the change, and `gradguard explain` prints it."""

    DETACHES = "`detach_()` changes no values: only its refusal of a view (GG003) can be reported"
    THROUGH_DATA = "it writes through `.data` or an `unsafe_*` view, which bumps no version counter"
    NOT_THROUGH_DATA = "it does not write through `.data` or an `unsafe_*` view"
    NOTHING_SAVED = ("no save of the tensor it changes (nor of one sharing its version counter) is live here: "
                     "none was made, or an earlier change met it and is reported there")
    FREED_BY_BACKWARD = "the backward pass came before it and freed what was saved"
    NO_BACKWARD = "no later backward pass is known to run through what it changes"
    RESTORED = "a clone taken before it was copied back before any save of it (`p.data.copy_(backup)`): the saved values are back"
    GRAPH_DIES = ("the graph holding the save is not used after the function returns: nothing that can reach it "
                  "escapes (returned, yielded, kept by `self`, an argument, a global or a call not followed)")
    GRAD_OFF = "grad is off here (`torch.no_grad()`, `inference_mode()`, `set_grad_enabled(False)`)"
    REQUIRES_NO_GRAD = "the tensor requires no grad"
    NOT_A_LEAF = "the tensor is not a leaf (an op computed it) nor a view of one"
    NOT_SUCH_VIEW = ("the tensor is no view torch restricts: an output of `chunk`/`split`/`unbind`, a view made under "
                     "`no_grad`, one a custom Function or a backward-hooked module returned")
    MAYBE_A_COPY = "`detach_()` of what may be a copy rather than a view (`.contiguous()`, `.reshape()`)"
    SILENT_WHEN_COMPILED = ("a region compiled by inductor saved it as a matrix product's operand, which its backward "
                            "reads unchecked: it raises nothing and computes the gradient from the changed value (GG005)")
    NOT_COMPILED_SAVE = ("it changes no save that a region compiled by inductor reads unchecked (a matrix product's "
                         "operand, neither operand written transposed), from outside that region")
    LEAF_ERROR_FIRST = "PyTorch raises its leaf error at the change first (GG002)"
    VIEW_ERROR_FIRST = "PyTorch raises its view error at the change first (GG003)"
    NOT_SELECTED = "the rule is not selected for this file (settings)"
    NOQA = "`# noqa` on the line silences it"
    FILE_NOQA = "`# gradguard: noqa` exempts the file from it"


@dataclass
class RuleContext:
    """One analysed file, as the rules read it."""

    document: Document
    changes: list[InplaceChange]
    project: ProjectIndex | None = None
    cuts: list[Cut] = field(default_factory=list)  # where the analysis stopped short
    reported: tuple[Finding, ...] = ()  # what the rules that ran before found here, `# noqa` not yet applied
    selected: Callable[[str], bool] = lambda code: True  # whether a code's rule runs on this file

    def code(self, node: cst.CSTNode) -> str:
        return self.document.code(node)

    def locate(self, node: cst.CSTNode, file_hint: str | None = None,
               scope: cst.CSTNode | None = None) -> tuple[str, Span]:
        """The file and range of `node`, which may lie in another file of the project (`file_hint`,
        in the function `scope`)."""
        try:
            return self.document.filename, self.document.span(node, scope)
        except KeyError:
            found = self.project.locate(node, file_hint, scope) if self.project is not None else None
            if found is None:
                raise
            return found

    def where(self, node: cst.CSTNode, file_hint: str | None = None, scope: cst.CSTNode | None = None) -> str:
        """`line 14` in this file, `blocks.py:11` in another one of the project, `timm/layers/mlp.py:48`
        in an installed library."""
        filename, span = self.locate(node, file_hint, scope)
        if filename == self.document.filename:
            return f"line {span.start.line}"
        parts = Path(filename).parts
        installed = max((i for i, part in enumerate(parts) if part in ("site-packages", "dist-packages")), default=None)
        shown = "/".join(parts[installed + 1:]) if installed is not None else Path(filename).name
        return f"{shown}:{span.start.line}"

    def subject(self, change: InplaceChange) -> str:
        """How a message names the changed tensor: its source text, when it has one."""
        return f"`{self.code(change.target_node)}`" if change.target_node is not None else "This tensor"

    def immediate_error(self, code: str, change: InplaceChange, certain: bool, message: str,
                        created: str, fixes: tuple[Fix, ...] = ()) -> Finding:
        """A finding for an error PyTorch raises at the changing line, pointing at the tensor's creation
        (a warning that says so where it holds only for a value other than a parameter's default)."""
        if change.assumes is not None:
            certain, message = False, f"{message[:-1]} ({assumption(change)})."
        if change.compiled is not None:
            message = (f"{message[:-1]}; compiled (`torch.compile`, backend \"{change.compiled.backend}\"), the "
                       "program raises at the region's first call instead, as dynamo traces it, wrapped in "
                       "`TorchRuntimeError` (\"RuntimeError when making fake tensor call\").")
        origin = change.target.origin.node
        related = (Related(*self.locate(origin), created),) if origin is not None else ()
        related += self.called_from(change)
        return Finding(code, Severity.ERROR if certain else Severity.WARNING, message,
                       self.document.filename, self.document.span(change.node, change.scope), related, fixes)

    def import_name(self, qualname: str) -> str | None:
        """The name this file binds `qualname` to at top level (`torch.nn` → `nn`), if any."""
        module = self.document.module
        if module is None:
            return None
        for line in module.body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for statement in line.body:
                if isinstance(statement, cst.Import):
                    for alias in statement.names:
                        name = self.code(alias.name)
                        if name == qualname:
                            return self.code(alias.asname.name) if alias.asname is not None else name
                elif isinstance(statement, cst.ImportFrom) and statement.module is not None \
                        and not statement.relative and not isinstance(statement.names, cst.ImportStar):
                    parent = self.code(statement.module)
                    for alias in statement.names:
                        if f"{parent}.{self.code(alias.name)}" == qualname:
                            return self.code(alias.asname.name) if alias.asname is not None else self.code(alias.name)
        return None

    def in_this_file(self, node: cst.CSTNode) -> bool:
        try:
            self.document.span(node)
        except KeyError:
            return False
        return True

    def called_from(self, change: InplaceChange) -> tuple[Related, ...]:
        """Related information: the calls, outermost first, that ran the function the change is in."""
        scopes = change.scopes if len(change.scopes) == len(change.call_chain) + 1 else (None,) * len(change.call_chain)
        return tuple(Related(*self.locate(node, scope=scope),
                             f"`{self.code(node.func) if isinstance(node, cst.Call) else 'it'}(...)` "
                             "ran the code that changes it") for node, scope in zip(change.call_chain, scopes))

    def at_backward(self, change: InplaceChange, says: str) -> tuple[Related, ...]:
        """Related information: the backward pass after the change (when it is known, in this file),
        its code followed by `says`."""
        statement = change.backward_statement
        if statement is None or not self.in_this_file(statement):
            return ()
        return (Related(self.document.filename, self.document.span(statement.body[0], change.scope),
                        f"`{self.code(statement.body[0])}` {says}"),)

    def saved_here(self, record: SavedRecord) -> tuple[Related, ...]:
        """Related information: where the op saved the tensor (and the user's call that ran it)."""
        related = [Related(*self.locate(record.node, record.file, record.scope),
                           f"`{record.saved_by}` saved its {record.what} for backward here")]
        if record.run_by is not None:
            related.append(Related(*self.locate(record.run_by, record.file, record.scope),
                                   f"`{record.saved_by}` ran in this call"))
        return tuple(related)


@dataclass(frozen=True)
class Rule:
    """A rule: its code, its name, its documentation (the module docstring), its check and, for a
    rule on in-place changes, why it drops one."""

    code: str
    name: str
    summary: str
    documentation: str
    url: str
    check: Callable[[RuleContext], Iterator[Finding]]
    dropped: Callable[[InplaceChange], NotReported | None] | None = None  # why it leaves a change unreported

    def page(self) -> str:
        """The rule's documentation as a Markdown page: a title, then the docstring as written."""
        return rule_page(self.code, self.name, self.documentation)

    @classmethod
    def from_module(cls, module: ModuleType) -> Rule:
        doc = (module.__doc__ or "").strip()
        summary = doc.splitlines()[0] if doc else ""
        return cls(module.CODE, module.NAME, summary, doc, rule_url(module.CODE), module.check,
                   getattr(module, "dropped", None))
