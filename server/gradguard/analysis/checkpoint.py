"""The module-level code's state between two top-level statements, kept from one version of an
open document to the next, so that typing further down (a notebook's training-loop cell, a
script's main block) runs the module level from the statement typed in, not from the top.

A version whose module-level code changed takes a checkpoint before its first top-level
statement that the previous version did not have: the next keystroke lands there again. A
later version whose top-level statements before that point are the same (the same nodes:
unchanged blocks keep theirs) starts from a copy of it. The last `MAX_CHECKPOINTS` are kept,
for typing that moves on to the next statement and backspacing that goes back to the one above
(and an open document gets a few spread over it before its first keystroke: `engine.py`).

Everything the interpreter would have built by running those statements is in it: the names and
live saves, the file's classes, the changes found and those still waiting for a backward pass,
the functions left for later, what the hovers show, the steps spent (so a budget cuts where a
run from the top would).

Abstract values that can change after they are built (modules, lists, dicts, a method bound to
a module) are copied, once each, keeping which of them share what; tensors and the other
frozen values are shared, and so are the classes' templates that nothing but a copy of them
could change (`sealed`: what `__init__` built when the class statement ran, each instance and
each method analysed getting a copy of its own), which refer to the document's one `Definitions`.
"""

from __future__ import annotations

from enum import Enum, auto
from typing import Iterable

from gradguard.analysis.events import Checkpoint
from gradguard.analysis.shared import InterpreterState
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    Definitions,
    DictValue,
    FunctionRef,
    GeneratorValue,
    ModuleValue,
    PartialValue,
    SequenceValue,
    SuperValue,
    Value,
    evolved,
    shallow,
)

MAX_CHECKPOINTS = 4  # per open document


def take(interpreter: InterpreterState, state: State, index: int, steps: int) -> Checkpoint | None:
    """A checkpoint of `interpreter`'s module level before its top-level statement `index`, having
    spent `steps` (None where the analysis stopped short before it, or read an import only in
    part: a run from the top decides those)."""
    if interpreter.result.cuts or interpreter.budget.unread or interpreter.budget.short_reads or state.dead:
        return None
    definitions = interpreter.definitions
    live = Checkpoint(
        prefix=tuple(interpreter.module.body[:index]), definitions=definitions, env=state.env,
        globals=None if definitions.globals is state.env else definitions.globals, saves=state.saves,
        grad_enabled=state.grad_enabled, classes=definitions.classes, bases=definitions.bases,
        class_attributes=definitions.class_attributes, star_imports=definitions.star_imports,
        changes=interpreter.result.changes, pending=interpreter.pending, entered=frozenset(interpreter.entered),
        splatted=frozenset(interpreter.splatted),
        seen=interpreter.seen, deferred=interpreter.deferred, planned=frozenset(interpreter.planned),
        cut_calls=frozenset(interpreter.cut_calls), summaries=interpreter.summaries,
        callee_records=frozenset(interpreter.callee_records), last_callee_env=interpreter.last_callee_env,
        next_serial=interpreter.next_serial, followed=interpreter.followed, steps=steps, hovers=interpreter.hovers,
        reads=dict(interpreter.budget.charged),
        sealed=frozenset(id(template) for _, template in definitions.classes.values()
                         if template is not None and sealed(template)))
    return _copied(live, _Copier(definitions, definitions))


def restore(checkpoint: Checkpoint, interpreter: InterpreterState, state: State) -> None:
    """Put `interpreter` and its module-level `state` where the checkpoint was taken: a copy of
    it, whose values refer to the interpreter's own definitions."""
    definitions = interpreter.definitions
    copied = _copied(checkpoint, _Copier(checkpoint.definitions, definitions))
    definitions.globals = copied.env if copied.globals is None else copied.globals
    definitions.classes, definitions.bases = copied.classes, copied.bases
    definitions.class_attributes, definitions.star_imports = copied.class_attributes, copied.star_imports
    state.env, state.saves, state.grad_enabled = copied.env, copied.saves, copied.grad_enabled
    interpreter.result.changes, interpreter.pending = copied.changes, copied.pending
    interpreter.entered, interpreter.seen = set(copied.entered), copied.seen
    interpreter.splatted = set(copied.splatted)
    interpreter.deferred, interpreter.planned = copied.deferred, set(copied.planned)
    interpreter.cut_calls, interpreter.summaries = set(copied.cut_calls), copied.summaries
    interpreter.callee_records, interpreter.last_callee_env = set(copied.callee_records), copied.last_callee_env
    interpreter.next_serial, interpreter.followed = copied.next_serial, copied.followed
    interpreter.budget.steps += copied.steps
    interpreter.budget.charge_again(checkpoint.reads)


def _copied(checkpoint: Checkpoint, values: _Copier) -> Checkpoint:
    """`checkpoint` with its containers, the values in them that can change and its pending
    changes (a later backward pass confirms them) copied."""
    pending = {id(change): shallow(change) for change in checkpoint.pending}
    if values.old is values.new:  # sealed templates refer to these definitions: they stand as they are
        values.share(template for _, template in checkpoint.classes.values() if id(template) in checkpoint.sealed)
    return evolved(
        checkpoint,
        env=values.names(checkpoint.env),
        globals=None if checkpoint.globals is None else values.names(checkpoint.globals),
        saves=dict(checkpoint.saves),
        classes={name: (node, values.value(template)) for name, (node, template) in checkpoint.classes.items()},
        bases={name: tuple(values.value(v) for v in found) for name, found in checkpoint.bases.items()},
        class_attributes={name: values.names(found) for name, found in checkpoint.class_attributes.items()},
        star_imports=list(checkpoint.star_imports),
        changes=[pending.get(id(c), c) for c in checkpoint.changes],
        pending=list(pending.values()),
        seen=dict(checkpoint.seen),
        deferred=[d if d.template is None else evolved(d, template=values.value(d.template))
                  for d in checkpoint.deferred],
        summaries={key: (values.value(found), functions) for key, (found, functions) in checkpoint.summaries.items()},
        last_callee_env=values.names(checkpoint.last_callee_env),
    )


class _Copier:
    """Copies of abstract values that can change, each object copied once (what two values
    shared, their copies share), referring to `new` definitions where they referred to `old`;
    frozen values are shared as they are."""

    def __init__(self, old: Definitions, new: Definitions) -> None:
        self.old, self.new = old, new
        self._copies: dict[int, object] = {}

    def share(self, values: Iterable[Value | None]) -> None:
        """Let these values (and what only they hold) stand as they are in the copies."""
        for value in values:
            if value is not None:
                self._copies[id(value)] = value

    def names(self, names: dict[str, Value]) -> dict[str, Value]:
        return {name: self.value(value) for name, value in names.items()}  # type: ignore[misc]

    def value(self, value: Value | None) -> Value | None:
        if value is None:
            return None
        known = self._copies.get(id(value))
        if known is not None:
            return known  # type: ignore[return-value]
        kind = _kind(value)
        if kind is _Kind.SHARED:
            return value
        if kind is _Kind.MODULE:
            return self._module(value)  # type: ignore[arg-type]
        if kind is _Kind.SEQUENCE:
            sequence = self._copies[id(value)] = shallow(value)
            sequence.items = tuple(self.value(item) for item in value.items)  # type: ignore[union-attr]
            sequence.repeated = self.value(value.repeated)  # type: ignore[union-attr]
            return sequence
        if kind is _Kind.DICT:
            mapping = self._copies[id(value)] = shallow(value)
            mapping.entries = {key: self.value(item) for key, item in value.entries.items()}  # type: ignore[union-attr]
            return mapping
        if kind is _Kind.FUNCTION and (value.bound_self is not None or value.closure is not None  # type: ignore[union-attr]
                                       or value.definitions is self.old is not self.new):  # type: ignore[union-attr]
            closure: dict[str, Value] | None = {} if value.closure is not None else None  # type: ignore[union-attr]
            bound = self._copies[id(value)] = evolved(value, closure=closure, definitions=self._definitions(value))
            bound.__dict__["bound_self"] = self.value(value.bound_self)  # type: ignore[union-attr]  # it may refer back to `bound`
            if closure is not None:
                closure.update(self.names(value.closure))  # type: ignore[union-attr, arg-type]
            return bound
        if kind is _Kind.BOUND_CALL:  # a partial, a generator: what it will call with
            found = self._copies[id(value)] = evolved(value, func=self.value(value.func),  # type: ignore[union-attr]
                                                      args=tuple(self.value(a) for a in value.args),  # type: ignore[union-attr]
                                                      kwargs=self.names(value.kwargs))  # type: ignore[union-attr]
            return found
        if kind is _Kind.SUPER:
            found = self._copies[id(value)] = evolved(value, instance=self._module(value.instance),  # type: ignore[union-attr]
                                                      definitions=self._definitions(value))
            return found
        return value

    def _definitions(self, value: FunctionRef | SuperValue) -> Definitions:
        return self.new if value.definitions is self.old else value.definitions

    def _module(self, module: ModuleValue) -> ModuleValue:
        known = self._copies.get(id(module))
        if known is not None:
            return known  # type: ignore[return-value]
        found = self._copies[id(module)] = shallow(module)
        if found.definitions is self.old:
            found.definitions = self.new
        found.parameters = dict(module.parameters)
        found.buffers = dict(module.buffers)
        found.children = None if module.children is None else \
            [self.value(c) for c in module.children]  # type: ignore[misc]
        found.named_children = self.names(module.named_children)
        found.forward_hooks = [self.value(hook) for hook in module.forward_hooks]  # type: ignore[misc]
        found.forward_pre_hooks = [self.value(hook) for hook in module.forward_pre_hooks]  # type: ignore[misc]
        found.mapping = self.value(module.mapping)  # type: ignore[assignment]
        return found


def sealed(template: ModuleValue) -> bool:
    """Whether a class's template can be shared, not copied: everything under it is a module, or a
    value that never changes (a tensor, a constant, a function neither bound nor a closure). Each
    instance, a classmethod's `cls` and each method analysed get a copy of the template, whose
    modules are copied too; a tuple, a bound method or a partial under it could be reached from
    such a copy, and changed through it."""
    seen: set[int] = set()
    pending: list[Value] = [template]
    while pending:
        value = pending.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        kind = _kind(value)
        if kind is _Kind.MODULE:
            if value.mapping is not None or value.forward_hooks or value.forward_pre_hooks:  # type: ignore[union-attr]
                return False
            pending.extend(value.children or ())  # type: ignore[union-attr]
            pending.extend(value.named_children.values())  # type: ignore[union-attr]
        elif kind is _Kind.FUNCTION:
            if value.bound_self is not None or value.closure is not None:  # type: ignore[union-attr]
                return False
        elif kind is not _Kind.SHARED:
            return False
    return True


class _Kind(Enum):
    """How `_Copier` copies a value of one type."""

    SHARED = auto()  # frozen: shared as it is
    MODULE = auto()
    SEQUENCE = auto()
    DICT = auto()
    FUNCTION = auto()  # copied when bound, a closure or of the old definitions
    SUPER = auto()
    BOUND_CALL = auto()  # a partial or a generator: its function and arguments copied


def _kind(value: object) -> _Kind:
    """How values of `value`'s type are copied (found once per type)."""
    kind = _KINDS.get(type(value))
    if kind is None:
        kind = _KINDS[type(value)] = _kind_of(value)
    return kind


def _kind_of(value: object) -> _Kind:
    for base, kind in ((ModuleValue, _Kind.MODULE), (SequenceValue, _Kind.SEQUENCE), (DictValue, _Kind.DICT),
                       (FunctionRef, _Kind.FUNCTION), (SuperValue, _Kind.SUPER),
                       ((PartialValue, GeneratorValue), _Kind.BOUND_CALL)):
        if isinstance(value, base):
            return kind
    return _Kind.SHARED


_KINDS: dict[type, _Kind] = {}  # per type of value met: its kind
