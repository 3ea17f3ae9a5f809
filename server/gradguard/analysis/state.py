"""The abstract state at one program point: bindings, live saves by version counter, grad mode."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gradguard.analysis.values import SavedRecord, TensorValue, Tri, Value, join_values, new_version_counter


_ABSENT = object()


@dataclass
class State:
    """What holds at one program point of one scope."""

    env: dict[str, Value]
    saves: dict[int, tuple[SavedRecord, ...]] = field(default_factory=dict)
    grad_enabled: Tri = Tri.YES
    dead: bool = False

    def copy(self) -> State:
        return State(dict(self.env), dict(self.saves), self.grad_enabled, self.dead)

    def join(self, other: State) -> State:
        if self.dead:
            return other.copy()
        if other.dead:
            return self.copy()
        saves: dict[int, tuple[SavedRecord, ...]] = {}
        env: dict[str, Value] = {}
        others = other.env
        for name, value in self.env.items():
            theirs = others.get(name, _ABSENT)
            if theirs is value:  # most names (the globals among them) are bound alike on both paths
                env[name] = value
                continue
            if theirs is _ABSENT:
                continue
            if (isinstance(value, TensorValue) and isinstance(theirs, TensorValue)
                    and value.version_counter != theirs.version_counter):
                merged, records = merge_tensors(value, theirs, self.saves.get(value.version_counter, ()),
                                                other.saves.get(theirs.version_counter, ()))
                env[name] = merged
                if records:
                    saves[merged.version_counter] = records
            else:
                env[name] = join_values(value, theirs)
        for vc in (self.saves.keys() | other.saves.keys()) - saves.keys():
            mine, theirs = self.saves.get(vc, ()), other.saves.get(vc, ())
            merged = [r if r in theirs else replace(r, certain=False) for r in mine]
            merged += [replace(r, certain=False) for r in theirs if r not in mine]
            saves[vc] = tuple(merged)
        return State(env, saves, self.grad_enabled.join(other.grad_enabled))


def merge_tensors(a: TensorValue, b: TensorValue, saved_a: tuple[SavedRecord, ...],
                  saved_b: tuple[SavedRecord, ...]) -> tuple[TensorValue, tuple[SavedRecord, ...]]:
    """One name bound to either of two tensors: a changed through it changes whichever it is.

    The merged tensor gets the saves of both; a save is certain only if both paths have one.
    """
    both = any(r.certain for r in saved_a) and any(r.certain for r in saved_b)
    records = tuple(r if (both and r.certain) else replace(r, certain=False) for r in (*saved_a, *saved_b))
    merged = replace(join_values(a, replace(b, version_counter=a.version_counter)),
                     version_counter=new_version_counter())
    return merged, records
