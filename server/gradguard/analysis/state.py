"""The abstract state at one program point: bindings, live saves by version counter, grad mode."""

from __future__ import annotations

from dataclasses import dataclass, field

from gradguard.analysis.values import (
    DictValue,
    ModuleValue,
    SavedRecord,
    SequenceValue,
    TensorValue,
    Tri,
    Value,
    evolved,
    join_values,
    new_version_counter,
)

_ABSENT = object()


@dataclass
class State:
    """What holds at one program point of one scope.

    `env` holds the scope's own names; a function's scope reads the module's names from
    `globals` (shared, not copied: a join then walks only the few names of the function).
    A module-level scope's `env` is the module's globals.
    """

    env: dict[str, Value]
    saves: dict[int, tuple[SavedRecord, ...]] = field(default_factory=dict)
    grad_enabled: Tri = Tri.YES
    dead: bool = False
    globals: dict[str, Value] = field(default_factory=dict)

    def copy(self) -> State:
        return State(dict(self.env), dict(self.saves), self.grad_enabled, self.dead, self.globals)

    def become(self, new: State) -> None:
        """Hold what `new` holds: the point after a branch, a loop or a `try` whose paths joined in `new`.
        A module-level scope's names stay in the one dict that is the module's globals (what the
        functions it calls read)."""
        if not self.globals and new.env is not self.env:
            self.env.clear()
            self.env.update(new.env)
        else:
            self.env = new.env
        self.saves, self.grad_enabled, self.dead = new.saves, new.grad_enabled, new.dead

    def modules(self, *more: Value | None) -> list[ModuleValue]:
        """Every module this scope's names (and `more`) reach, each once: those whose attributes may
        hold an object the code changes."""
        roots = [v for v in (*self.env.values(), *self.globals.values(), *more) if isinstance(v, ModuleValue)]
        return list({id(m): m for root in roots for m in root.tree()}.values())

    def lookup(self, name: str) -> Value | None:
        """The value `name` is bound to in this scope or the module's globals, if any."""
        value = self.env.get(name, _ABSENT)
        if value is _ABSENT:
            value = self.globals.get(name, _ABSENT)
        return None if value is _ABSENT else value  # type: ignore[return-value]

    def merge(self, a: TensorValue, b: TensorValue) -> TensorValue:
        """A name bound to either of two tensors here (`merge_tensors`), its saves kept in this state."""
        merged, records = merge_tensors(a, b, self.saves.get(a.version_counter, ()), self.saves.get(b.version_counter, ()))
        if records:
            self.saves[merged.version_counter] = records
        return merged

    def join(self, other: State) -> State:
        if self.dead:
            return other.copy()
        if other.dead:
            return self.copy()
        saves: dict[int, tuple[SavedRecord, ...]] = {}
        env: dict[str, Value] = {}
        mine, others = self.env, other.env

        def bind(name: str, value: Value, theirs: Value) -> None:
            env[name] = _joined(value, theirs, self.saves, other.saves, saves)

        for name, value in mine.items():
            theirs = others.get(name, _ABSENT)
            if theirs is value:  # most names are bound alike on both paths
                env[name] = value
            elif theirs is not _ABSENT or (theirs := other.globals.get(name, _ABSENT)) is not _ABSENT:
                bind(name, value, theirs)  # type: ignore[arg-type]
            else:  # bound on this path only: a later read of it means this path ran
                env[name] = value
        for name, theirs in others.items():
            if name not in mine:
                value = self.globals.get(name, _ABSENT)
                if value is _ABSENT:
                    env[name] = theirs
                else:
                    bind(name, value, theirs)  # type: ignore[arg-type]
        for vc in (self.saves.keys() | other.saves.keys()) - saves.keys():
            mine, theirs = self.saves.get(vc, ()), other.saves.get(vc, ())
            if mine is theirs:  # most saves are the same on both paths
                saves[vc] = mine
                continue
            merged = [r if r in theirs else evolved(r, certain=False) for r in mine]
            merged += [evolved(r, certain=False) for r in theirs if r not in mine]
            saves[vc] = tuple(merged)
        return State(env, saves, self.grad_enabled.join(other.grad_enabled), globals=self.globals)

    def join_repeated(self, iteration: State) -> State:
        """The state at the head of a loop's next iteration: this state (the loop's entry) joined with
        what one iteration leaves, where the saves that iteration made stay as certain as they were:
        the next iteration runs after it."""
        joined = self.join(iteration)
        if self.dead or iteration.dead:
            return joined
        for vc, records in joined.saves.items():
            before = self.saves.get(vc, ())
            made = {evolved(r, certain=False): r for r in iteration.saves.get(vc, ()) if r.certain and r not in before}
            if made:
                joined.saves[vc] = tuple(made.get(r, r) for r in records)
        return joined


def merge_tensors(a: TensorValue, b: TensorValue, saved_a: tuple[SavedRecord, ...],
                  saved_b: tuple[SavedRecord, ...]) -> tuple[TensorValue, tuple[SavedRecord, ...]]:
    """One name bound to either of two tensors: a changed through it changes whichever it is.

    The merged tensor gets the saves of both; a save is certain only if both paths have one.
    """
    both = any(r.certain for r in saved_a) and any(r.certain for r in saved_b)
    records = tuple(r if (both and r.certain) else evolved(r, certain=False) for r in (*saved_a, *saved_b))
    merged = evolved(join_values(a, evolved(b, version_counter=a.version_counter)),
                     version_counter=new_version_counter(),
                     may_alias=a.may_alias | b.may_alias | {a.version_counter, b.version_counter})
    return merged, records


def _joined(value: Value, theirs: Value, mine: dict[int, tuple[SavedRecord, ...]],
            others: dict[int, tuple[SavedRecord, ...]], saves: dict[int, tuple[SavedRecord, ...]]) -> Value:
    """What a name holds where a path on which it held `value` (saves `mine`) meets one on which it
    held `theirs` (saves `others`); the records of two tensors merged into one go to `saves`. (A
    function of the module's: a nested one calling itself would hold both states in a reference
    cycle, left for the garbage collector to walk.)"""
    if isinstance(value, TensorValue) and isinstance(theirs, TensorValue) and value.version_counter != theirs.version_counter:
        merged, records = merge_tensors(value, theirs, mine.get(value.version_counter, ()),
                                        others.get(theirs.version_counter, ()))
        if records:
            saves[merged.version_counter] = records
        return merged
    if (isinstance(value, SequenceValue) and isinstance(theirs, SequenceValue) and value is not theirs
            and not (value.mutable or theirs.mutable) and value.repeated is None and theirs.repeated is None
            and len(value.items) == len(theirs.items)):  # a tuple carried by a loop: an LSTM's (h, c)
        return SequenceValue(tuple(_joined(a, b, mine, others, saves) for a, b in zip(value.items, theirs.items)))
    if (isinstance(value, DictValue) and isinstance(theirs, DictValue) and value is not theirs and value.complete
            and theirs.complete and value.entries.keys() == theirs.entries.keys()):  # a dict a loop builds anew: fast weights
        return DictValue({key: _joined(held, theirs.entries[key], mine, others, saves)
                          for key, held in value.entries.items()})
    return join_values(value, theirs)
