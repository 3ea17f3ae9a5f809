"""The module-level code's state between two top-level statements, kept from one version of an
open document to the next, so that typing further down (a notebook's training-loop cell, a
script's main block) runs the module level from the statement typed in, not from the top.

A version whose module-level code changed takes a checkpoint before its first top-level
statement that the previous version did not have: the next keystroke lands there again. A
later version whose top-level statements before that point are the same (the same nodes:
unchanged blocks keep theirs) starts from a copy of it. The last `MAX_CHECKPOINTS` are kept,
for typing that moves on to the next statement and backspacing that goes back to the one above. Everything the interpreter would have
built by running those statements is in it: the names and live saves, the file's classes, the
changes found and those still waiting for a backward pass, the functions left for later, what
the hovers show, the steps spent (so a budget cuts where a run from the top would).

Abstract values that can change after they are built (modules, lists, dicts, a method bound to
a module) are copied, once each, keeping which of them share what; tensors and the other
frozen values are shared.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import libcst as cst

from gradguard.analysis.events import Checkpoint
from gradguard.analysis.shared import InterpreterState
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    Definitions,
    DictValue,
    FunctionRef,
    ModuleValue,
    SequenceValue,
    SuperValue,
    Value,
)

MAX_CHECKPOINTS = 4  # per open document


def take(interpreter: InterpreterState, state: State, index: int, steps: int) -> Checkpoint | None:
    """A checkpoint of `interpreter`'s module level before its top-level statement `index`, having
    spent `steps` (None where the analysis stopped short before it: a run from the top decides
    those cuts)."""
    if interpreter.result.cuts or interpreter.budget.unread or state.dead:
        return None
    definitions = interpreter.definitions
    values = _Copier(definitions, definitions)
    env = values.names(state.env)
    pending = {id(change): replace(change) for change in interpreter.pending}
    return Checkpoint(
        prefix=tuple(interpreter.module.body[:index]),
        definitions=definitions,
        env=env,
        globals=None if definitions.globals is state.env else values.names(definitions.globals),
        saves=dict(state.saves),
        grad_enabled=state.grad_enabled,
        classes=values.classes(definitions.classes),
        bases={name: tuple(values.value(v) for v in found) for name, found in definitions.bases.items()},
        class_attributes={name: values.names(found) for name, found in definitions.class_attributes.items()},
        star_imports=list(definitions.star_imports),
        changes=[pending.get(id(c), c) for c in interpreter.result.changes],
        pending=list(pending.values()),
        entered=frozenset(interpreter.entered),
        seen=dict(interpreter.seen),
        deferred=[replace(d, template=values.value(d.template)) for d in interpreter.deferred],
        planned=frozenset(interpreter.planned),
        cut_calls=frozenset(interpreter.cut_calls),
        summaries=values.summaries(interpreter.summaries),
        callee_records=frozenset(interpreter.callee_records),
        last_callee_env=values.names(interpreter.last_callee_env),
        next_serial=interpreter.next_serial,
        followed=interpreter.followed,
        steps=steps,
        hovers=interpreter.hovers,
    )


def restore(checkpoint: Checkpoint, interpreter: InterpreterState, state: State) -> None:
    """Put `interpreter` and its module-level `state` where the checkpoint was taken: a copy of
    it, whose values refer to the interpreter's own definitions."""
    definitions = interpreter.definitions
    values = _Copier(checkpoint.definitions, definitions)
    env = values.names(checkpoint.env)
    definitions.globals = env if checkpoint.globals is None else values.names(checkpoint.globals)
    definitions.classes = values.classes(checkpoint.classes)
    definitions.bases = {name: tuple(values.value(v) for v in found) for name, found in checkpoint.bases.items()}
    definitions.class_attributes = {name: values.names(found) for name, found in checkpoint.class_attributes.items()}
    definitions.star_imports = list(checkpoint.star_imports)
    state.env, state.saves, state.grad_enabled = env, dict(checkpoint.saves), checkpoint.grad_enabled
    pending = {id(change): replace(change) for change in checkpoint.pending}
    interpreter.result.changes = [pending.get(id(c), c) for c in checkpoint.changes]
    interpreter.pending = list(pending.values())
    interpreter.entered = set(checkpoint.entered)
    interpreter.seen = dict(checkpoint.seen)
    interpreter.deferred = [replace(d, template=values.value(d.template)) for d in checkpoint.deferred]
    interpreter.planned = set(checkpoint.planned)
    interpreter.cut_calls = set(checkpoint.cut_calls)
    interpreter.summaries = values.summaries(checkpoint.summaries)
    interpreter.callee_records = set(checkpoint.callee_records)
    interpreter.last_callee_env = values.names(checkpoint.last_callee_env)
    interpreter.next_serial = checkpoint.next_serial
    interpreter.followed = checkpoint.followed
    interpreter.budget.steps += checkpoint.steps


class _Copier:
    """Copies of abstract values that can change, each object copied once (what two values
    shared, their copies share), referring to `new` definitions where they referred to `old`;
    frozen values are shared as they are."""

    def __init__(self, old: Definitions, new: Definitions) -> None:
        self.old, self.new = old, new
        self._copies: dict[int, object] = {}

    def names(self, names: dict[str, Value]) -> dict[str, Value]:
        return {name: self.value(value) for name, value in names.items()}  # type: ignore[misc]

    def classes(self, classes: dict[str, tuple[cst.ClassDef, ModuleValue | None]]
                ) -> dict[str, tuple[cst.ClassDef, ModuleValue | None]]:
        return {name: (node, self.value(template)) for name, (node, template) in classes.items()}  # type: ignore[misc]

    def summaries(self, summaries: dict[tuple[object, ...], tuple[Value, frozenset[cst.FunctionDef]]]
                  ) -> dict[tuple[object, ...], tuple[Value, frozenset[cst.FunctionDef]]]:
        return {key: (self.value(found), functions) for key, (found, functions) in summaries.items()}  # type: ignore[misc]

    def value(self, value: Value | None) -> Value | None:
        if value is None:
            return None
        known = self._copies.get(id(value))
        if known is not None:
            return known  # type: ignore[return-value]
        if isinstance(value, ModuleValue):
            return self._module(value)
        if isinstance(value, SequenceValue):
            sequence = self._copies[id(value)] = copy.copy(value)
            sequence.items = tuple(self.value(item) for item in value.items)  # type: ignore[misc]
            sequence.repeated = self.value(value.repeated)
            return sequence
        if isinstance(value, DictValue):
            mapping = self._copies[id(value)] = copy.copy(value)
            mapping.entries = {key: self.value(item) for key, item in value.entries.items()}  # type: ignore[misc]
            return mapping
        if isinstance(value, FunctionRef) and (value.bound_self is not None or value.closure is not None
                                               or value.definitions is self.old is not self.new):
            closure: dict[str, Value] | None = {} if value.closure is not None else None
            bound = self._copies[id(value)] = replace(value, closure=closure, definitions=self._definitions(value))
            object.__setattr__(bound, "bound_self", self.value(value.bound_self))  # it may refer back to `bound`
            if closure is not None and value.closure is not None:
                closure.update(self.names(value.closure))
            return bound
        if isinstance(value, SuperValue):
            found = self._copies[id(value)] = replace(value, instance=self._module(value.instance),
                                                      definitions=self._definitions(value))
            return found
        return value

    def _definitions(self, value: FunctionRef | SuperValue) -> Definitions:
        return self.new if value.definitions is self.old else value.definitions

    def _module(self, module: ModuleValue) -> ModuleValue:
        known = self._copies.get(id(module))
        if known is not None:
            return known  # type: ignore[return-value]
        found = self._copies[id(module)] = copy.copy(module)
        if found.definitions is self.old:
            found.definitions = self.new
        found.parameters = dict(module.parameters)
        found.buffers = dict(module.buffers)
        found.children = None if module.children is None else [self.value(c) for c in module.children]  # type: ignore[misc]
        found.named_children = self.names(module.named_children)
        found.forward_hooks = [self.value(hook) for hook in module.forward_hooks]  # type: ignore[misc]
        found.mapping = self.value(module.mapping)  # type: ignore[assignment]
        return found
