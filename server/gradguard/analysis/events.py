"""What the interpreter observed: each in-place change of a tensor, with everything the rules need."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import libcst as cst

from gradguard.analysis.values import (
    CompiledRegion,
    Definitions,
    ModuleValue,
    SavedRecord,
    TensorValue,
    TopLevel,
    Tri,
    Value,
)


PICKED_CODE = "<picked>"  # `InplaceChange.assumes` of a change in one of several functions a value not known picks

@dataclass(eq=False)
class InplaceChange:
    """One in-place change of a tensor at one place in the user's code.

    `node` is where the change is reported (the mutating expression, the user's call of the
    module that changes it, or the construction of a module that `nn.Sequential` runs).
    `saved` are the live saves of the changed version counter; `storage_saved` those of the
    tensor whose storage a `.data` / `unsafe_*` alias writes to without bumping its version.
    `statement` is the statement the change happens in (None inside a called function);
    `aliases` the other names bound, at that point, to tensors sharing the version counter;
    `backward_statement` the later statement whose backward pass runs into the changed save;
    `freed_by` the earlier one (or this file's call that ran it) whose backward pass freed the
    saves of the changed version counter, when none is live (`explain` says so); `dies_in` the
    entry point at whose exit the graph holding the saves it meets dies: nothing that can reach
    them escapes it (returned, yielded, kept by `self`, an argument, a global or a call not followed).
    `call_chain` holds the calls (outermost first) that led into the function of this file the
    change is in, when it was found by following them; `standalone_of` the function whose
    analysis without a known caller found it (None for module-level code and followed calls
    from it): such a change stands only if no analysed code calls that function. `scopes` are
    hints for placing the nodes (positions are found block by block).
    """

    node: cst.CSTNode
    target: TensorValue
    target_node: cst.CSTNode | None
    verb: str
    grad_enabled: Tri
    bumps_version: bool
    saved: tuple[SavedRecord, ...]
    storage_saved: tuple[SavedRecord, ...] = ()
    backward_follows: Tri = Tri.NO
    backward_statement: cst.SimpleStatementLine | None = None
    freed_by: cst.CSTNode | None = None
    dies_in: cst.FunctionDef | None = None
    inside_module: cst.CSTNode | None = None
    statement: cst.SimpleStatementLine | None = None
    aliases: tuple[str, ...] = ()
    call_chain: tuple[cst.CSTNode, ...] = ()
    standalone_of: cst.FunctionDef | None = None
    called_with_unknown_keywords: bool = False  # `standalone_of` is an `__init__` its callers give `**options`
    assumes: str | None = None  # a parameter it was found with a value other than its default of (`_other_branch`),
    # `$NAME` for an environment variable's, or `PICKED_CODE`
    detaches: bool = False  # `detach_()`: no value changes, but torch refuses it on a view (GG003)
    writes_grad: Tri = Tri.NO  # whether the value written requires grad (`a *= scale`, a parameter)
    # PyTorch raises its view error at this change in another pass of the same entry point's analysis
    # (a loop's first iteration): the backward this pass would break never runs
    refused_nearby: bool = False
    raised_first: cst.CSTNode | None = None  # the change before it in its block where PyTorch surely raises
    restored: bool = False  # a write through `.data` whose storage a clone taken before it was copied back into
    compiled: CompiledRegion | None = None  # the compiled region (`torch.compile`) the change runs in
    scopes: tuple[cst.FunctionDef | None, ...] = ()  # the functions the calls of `call_chain`, then `node`, lie in

    @property
    def scope(self) -> cst.FunctionDef | None:
        """The function `node` lies in (a hint for placing it; None: module-level code)."""
        return self.scopes[-1] if self.scopes else None


@dataclass(frozen=True)
class Deferred:
    """A function or method to interpret after the module-level code (`template`: its class's
    instance, for a method of an `nn.Module`; `is_forward`: that method is `forward`)."""

    function: cst.FunctionDef
    template: ModuleValue | None
    is_forward: bool


@dataclass(frozen=True)
class Cut:
    """Where the analysis stopped short of the end: `scope` is "call" (a followed call of
    `function` spent its budget: it and later calls of it return unknown values), "function"
    (`function`, or the module-level code when None, stopped where it was) or "file" (the
    functions named in `skipped` were not analysed). `node` is where a note about it goes in
    this file; `reason` is "steps", "time" (CPU) or "depth" (nesting)."""

    scope: str
    function: cst.FunctionDef | None
    node: cst.CSTNode | None
    reason: str
    skipped: tuple[str, ...] = ()


@dataclass(frozen=True)
class Seen:
    """The value a name held at one place (a tensor: with the live saves of its version counter there)."""

    value: Value
    saved: tuple[SavedRecord, ...]


@dataclass(frozen=True)
class Unit:
    """What interpreting one function or method observed, the functions it followed calls into,
    and the functions defined inside it (interpreted after it)."""

    changes: list[InplaceChange]
    entered: frozenset[cst.FunctionDef]
    nested: tuple[Deferred, ...] = ()
    seen: dict[cst.Name, Seen] = field(default_factory=dict)
    cuts: tuple[Cut, ...] = ()
    shares: bool = False  # it changed what later analyses see (`InterpreterState.shared_changed`)
    steps: int = 0  # the budget's steps it took
    grad_off: bool = False  # it ran with grad off: the file refers to it only where grad is off (`callers.py`)
    splatted: frozenset[cst.FunctionDef] = frozenset()  # of `entered`, the `__init__`s a call gave keywords not known
    # not interpreted: no code it may run changes a tensor (`quiet.py`); these are the file's functions it may run
    quiet_over: frozenset[cst.FunctionDef] | None = None


@dataclass(frozen=True)
class Checkpoint:
    """The module-level code's state before the top-level statements after `prefix`, kept for the
    next version of the file (`checkpoint.py`; never changed: each use copies it).

    Its values refer to `definitions`, the file's definitions in the run that took it; a run
    starting from it refers to its own instead.
    """

    prefix: tuple[cst.BaseStatement, ...]
    definitions: Definitions
    env: dict[str, Value]
    globals: dict[str, Value] | None  # the file's globals, when they are not `env` (a join replaced the names)
    saves: dict[int, tuple[SavedRecord, ...]]
    grad_enabled: Tri
    classes: dict[str, tuple[cst.ClassDef, ModuleValue | None]]
    bases: dict[str, tuple[Value, ...]]
    class_attributes: dict[str, dict[str, Value]]
    star_imports: list[str]
    changes: list[InplaceChange]
    pending: list[InplaceChange]
    entered: frozenset[cst.FunctionDef]
    splatted: frozenset[cst.FunctionDef]
    seen: dict[cst.Name, Seen]
    deferred: list[Deferred]
    planned: frozenset[cst.FunctionDef]
    cut_calls: frozenset[cst.FunctionDef]
    summaries: dict[tuple[object, ...], tuple[Value, frozenset[cst.FunctionDef]]]
    callee_records: frozenset[int]
    last_callee_env: dict[str, Value]
    next_serial: int
    followed: int
    steps: int  # spent by the module level up to here
    hovers: bool
    reads: dict[str, int] = field(default_factory=dict)  # the imported files it used up to here, with their steps
    sealed: frozenset[int] = frozenset()  # the classes' templates shared by its copies (`checkpoint.sealed`)

    def applies_to(self, body: Sequence[cst.BaseStatement], hovers: bool) -> bool:
        """Whether a version whose top-level statements are `body` may start from here."""
        return hovers == self.hovers and len(body) >= len(self.prefix) and all(
            a is b for a, b in zip(body, self.prefix))


@dataclass
class StatementFacts:
    """What `reuse.py` asks of each top-level statement, kept from version to version (a keystroke
    re-parses a few statements): the globals it reads, the functions and classes it defines."""

    reads: dict[cst.CSTNode, frozenset[str]] = field(default_factory=dict)
    defines: dict[cst.CSTNode, tuple[cst.FunctionDef | cst.ClassDef, ...]] = field(default_factory=dict)

    def kept_for(self, body: Sequence[cst.BaseStatement]) -> StatementFacts:
        """These facts, of the statements in `body` only."""
        top_level = set(body)
        return StatementFacts({s: n for s, n in self.reads.items() if s in top_level},
                              {s: d for s, d in self.defines.items() if s in top_level})


@dataclass
class ScopeResult:
    """Everything observed while interpreting one file: all its in-place changes; those of the
    module-level code, the functions it ran and the functions it left for later (`plan`); and
    per function, its `Unit`."""

    changes: list[InplaceChange] = field(default_factory=list)
    definitions: Definitions | None = None
    top_level: TopLevel | None = None  # what `definitions` held when this run ended
    units: dict[cst.FunctionDef, Unit] = field(default_factory=dict)
    module_changes: list[InplaceChange] = field(default_factory=list)
    module_entered: frozenset[cst.FunctionDef] = frozenset()
    module_splatted: frozenset[cst.FunctionDef] = frozenset()
    module_seen: dict[cst.Name, Seen] = field(default_factory=dict)
    module_next_serial: int = 1  # the serial the functions' saves start from (above the module level's)
    module_reads: dict[str, int] = field(default_factory=dict)  # the imported files it used (`Definitions.reading_cost`)
    plan: list[Deferred] = field(default_factory=list)
    cuts: list[Cut] = field(default_factory=list)  # where the analysis stopped short (see `Cut`)
    module_cuts: list[Cut] = field(default_factory=list)
    cut_short: bool = False  # the file's budget ran out: functions were left unanalysed
    cut_calls: bool = False  # some analysis stopped following a function's calls (`InterpreterState.cut_calls`)
    body: tuple[cst.BaseStatement, ...] = ()  # the file's top-level statements
    checkpoints: tuple[Checkpoint, ...] = ()  # the module level's state before statements typed in, shortest first
    facts: StatementFacts = field(default_factory=StatementFacts)  # of its top-level statements (`reuse.py`)
    references: dict[cst.CSTNode, object] = field(default_factory=dict)  # per top-level statement (`callers.py`)

    def seen_in(self, name: cst.Name) -> dict[cst.Name, Seen] | None:
        """What the names of the module-level code, or of the function `name` stands in, held, if
        `name` is among them (asked by hovers only: nothing is merged on the way)."""
        if name in self.module_seen:
            return self.module_seen
        return next((unit.seen for unit in self.units.values() if name in unit.seen), None)
