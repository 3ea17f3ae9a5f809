"""The tracer: watches every ATen op and every tensor autograd saves, without running backward.

`saved_tensors_hooks` sees each tensor an autograd node saves (exactly the conditional set) and
its version at that moment; a `TorchDispatchMode` sees each op below autograd, and the ops whose
schema writes an argument are the mutations. The version bump of an in-place op happens after
the mode returns (in `ADInplaceOrView`), so a mutation is resolved at the next checkpoint: the
next op, the next save, or the end. A saved tensor whose version moved is a hazard backward will
raise on (GG001); one whose bytes a mutation overwrote without moving its version (`.data`,
`unsafe_chunk`) is silently corrupted (GG004).

Saves are attributed to ops the way autograd makes them: inputs are saved just before the op
reaches the mode, outputs just after it returns (only by ops the op table says save outputs).
"""

from __future__ import annotations

import functools
import sys
import weakref
from dataclasses import dataclass, field
from types import TracebackType

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from gradguard.knowledge.ops import op as op_facts
from gradguard.verify.compiled import Region, current_region
from gradguard.verify.sites import Place, current_place

_FUNCTION_APPLY = torch.autograd.Function.apply.__func__.__code__
Memory = tuple[int, int, int]  # storage pointer, first byte, end byte


def _memory(tensor: torch.Tensor) -> Memory | None:
    """The bytes `tensor` can reach in its storage, or None for tensors without one."""
    try:
        pointer = tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None
    if tensor.numel() == 0:
        return (pointer, 0, 0)
    size = tensor.element_size()
    extent = 1 + sum((n - 1) * abs(s) for n, s in zip(tensor.shape, tensor.stride()))
    first = tensor.storage_offset() * size
    return (pointer, first, first + extent * size)


def _overlap(a: Memory, b: Memory) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


@functools.cache
def _schema(func: torch._ops.OpOverload) -> tuple[str, tuple[tuple[int, str, bool], ...], bool]:
    """The op table's name of `func` (`mul.Tensor`, `relu_`), the arguments it writes (position,
    name, keyword-only), and whether its autograd node saves outputs."""
    overload = func._overloadname
    name = func._opname if overload == "default" else f"{func._opname}.{overload}"
    written = tuple((index, argument.name, argument.kwarg_only) for index, argument in enumerate(func._schema.arguments)
                    if argument.alias_info is not None and argument.alias_info.is_write)
    facts = op_facts(name)
    return name, written, facts is not None and bool(facts.saves_outputs)


def describe(tensor: torch.Tensor) -> str:
    """`float32[4, 8]`."""
    return f"{str(tensor.dtype).removeprefix('torch.')}{list(tensor.shape)}"


class _Packed:
    """What a saved-tensor hook hands autograd: the graph holds it; it dies with the graph."""

    __slots__ = ("alias", "__weakref__")

    def __init__(self, alias: torch.Tensor) -> None:
        self.alias = alias  # detach(): same version counter and storage, no grad_fn (no cycle)


@dataclass
class Saved:
    """One tensor saved for backward: by which op, where, at which version."""

    packed: weakref.ref
    version: int
    memory: Memory
    description: str
    place: Place | None
    via: str | None
    op: str = "?"
    role: str = "input"  # "input", "output" or "ctx.save_for_backward"
    reported: bool = False
    region: Region | None = None  # the compiled region (`torch.compile`) that made the save


@dataclass(frozen=True)
class Mutation:
    """An op that wrote into some tensors' memory."""

    op: str
    place: Place | None
    via: str | None
    targets: tuple[Memory, ...]
    grad_enabled: bool
    region: Region | None = None  # the compiled region (`torch.compile`) the op ran in


@dataclass(frozen=True)
class Hazard:
    """A saved tensor changed before backward: `kind` GG001 (version moved) or GG004 (bytes
    overwritten through an alias with its own version counter)."""

    kind: str
    saved: Saved
    mutation: Mutation

    @property
    def of_compiled_save(self) -> bool:
        """Whether a compiled region made the save and code outside it changed it (what a compiled backward
        may read unchecked)."""
        return self.kind == "GG001" and self.saved.region is not None and self.mutation.region is None


@dataclass
class _LastOp:
    name: str
    outputs: list[tuple[Memory | None, tuple[int, ...], torch.dtype]]
    claimed: list[bool] = field(default_factory=list)


class Tracer(TorchDispatchMode):
    """`with Tracer() as tracer:` run code; `tracer.hazards` lists what backward would meet."""

    def __init__(self) -> None:
        super().__init__()
        self.hazards: list[Hazard] = []
        self.saves = 0
        self._by_storage: dict[int, list[Saved]] = {}
        self._pending_saves: list[Saved] = []
        self._pending_mutations: list[tuple[Mutation, list[tuple[Saved, _Packed]]]] = []
        self._last_op: _LastOp | None = None
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._busy = False

    def __enter__(self) -> Tracer:
        self._hooks.__enter__()
        super().__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        super().__exit__(kind, error, traceback)
        self._hooks.__exit__(kind, error, traceback)
        self._attribute_pending("?", "input")
        self._resolve()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's signature
        kwargs = kwargs or {}
        if self._busy:
            return func(*args, **kwargs)
        self._resolve()
        name, written, saves_outputs = _schema(func)
        self._attribute_pending(name, "input")
        targets = []
        for index, argument, kwarg_only in written:
            value = kwargs.get(argument) if kwarg_only or index >= len(args) else args[index]
            for tensor in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(tensor, torch.Tensor) and (memory := _memory(tensor)) is not None:
                    targets.append(memory)
        # the saves this op may hit, kept alive until its version bump can be read
        candidates = [(saved, packed) for target in targets for saved in self._by_storage.get(target[0], ())
                      if not saved.reported and (packed := saved.packed()) is not None]
        if candidates:
            place, via = current_place(1)
            self._pending_mutations.append(
                (Mutation(name, place, via, tuple(targets), torch.is_grad_enabled(), current_region()), candidates))
        out = func(*args, **kwargs)
        if saves_outputs:
            outputs = [o for o in (out if isinstance(out, (list, tuple)) else (out,)) if isinstance(o, torch.Tensor)]
            self._last_op = _LastOp(name, [(_memory(o), tuple(o.shape), o.dtype) for o in outputs],
                                    [False] * len(outputs))
        return out

    def _pack(self, tensor: torch.Tensor) -> _Packed:
        self._resolve()
        self._busy = True
        try:
            packed = _Packed(tensor.detach())
        finally:
            self._busy = False
        memory = _memory(tensor)
        if memory is None:
            return packed
        place, via = current_place(1)
        saved = Saved(weakref.ref(packed, self._forget(memory[0])), tensor._version, memory, describe(tensor),
                      place, via, region=current_region())
        self.saves += 1
        self._by_storage.setdefault(memory[0], []).append(saved)
        if sys._getframe(1).f_code is _FUNCTION_APPLY:  # saves made by a custom Function's forward
            saved.op, saved.role = "a custom autograd.Function", "ctx.save_for_backward"
        elif not self._claim_output(saved, tensor):
            self._pending_saves.append(saved)
        return packed

    @staticmethod
    def _unpack(packed: _Packed) -> torch.Tensor:
        return packed.alias

    def _forget(self, pointer: int):  # noqa: ANN202 - a weakref callback
        def forget(reference: weakref.ref) -> None:
            bucket = self._by_storage.get(pointer)
            if bucket is not None:
                bucket[:] = [s for s in bucket if s.packed is not reference]
                if not bucket:
                    del self._by_storage[pointer]
        return forget

    def _claim_output(self, saved: Saved, tensor: torch.Tensor) -> bool:
        """Attribute `saved` to the last op when it is one of that op's outputs, each claimed once."""
        last = self._last_op
        if last is None:
            return False
        wanted = (saved.memory, tuple(tensor.shape), tensor.dtype)
        for index, output in enumerate(last.outputs):
            if not last.claimed[index] and output == wanted:
                last.claimed[index] = True
                saved.op, saved.role = last.name, "output"
                return True
        return False

    def _attribute_pending(self, name: str, role: str) -> None:
        for saved in self._pending_saves:
            saved.op, saved.role = name, role
        self._pending_saves = []
        self._last_op = None

    def _resolve(self) -> None:
        """Match the pending mutations, now that their version bumps are done, with the saves they met."""
        if not self._pending_mutations:
            return
        mutations, self._pending_mutations = self._pending_mutations, []
        for mutation, candidates in mutations:
            for saved, packed in candidates:
                if saved.reported:
                    continue
                version = packed.alias._version
                if version != saved.version:
                    kind = "GG001"
                elif any(_overlap(target, saved.memory) for target in mutation.targets):
                    kind = "GG004"
                else:
                    continue
                saved.reported = True
                self.hazards.append(Hazard(kind, saved, mutation))

