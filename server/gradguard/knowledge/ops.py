"""What each ATen overload saves for backward, read from the generated ``ops.json``.

The table is produced by ``scripts/generate_op_table.py`` (``make knowledge``) from the torchgen
data of the installed torch. This module only reads it: stdlib only, no torch.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from gradguard.knowledge import surface

_TABLE = Path(__file__).with_name("ops.json")


@dataclass(frozen=True)
class OpFacts:
    """Autograd facts about one ATen overload (e.g. ``mul.Tensor``, ``relu_``, ``mul.out``).

    ``saves`` maps each input saved by reference to the inputs whose ``requires_grad`` makes it
    saved (any of them), or to ``None`` when it is saved whenever a grad_fn is recorded.
    In-place ops never save ``self`` by reference: when ``saves`` names ``self`` it is a clone
    (``saves_clone``). ``saves_result`` means output 0 is saved (for in-place ops: the mutated
    tensor at its post-op version); ``saves_outputs`` lists every saved output index.
    ``composite`` ops have no grad_fn of their own on CPU/CUDA: what they save comes from the
    ops they decompose into, so ``saves`` is empty.
    """

    name: str
    args: tuple[str, ...]
    tensor_args: frozenset[str]
    saves: Mapping[str, frozenset[str] | None] = field(hash=False)
    saves_result: bool
    kind: str  # "functional" | "inplace" | "out" | "mutable" (mutates an argument, not self)
    mutates: tuple[str, ...]
    saves_clone: bool
    view_of: str | None
    multi_output_view: bool
    composite: bool
    differentiable: bool
    grad_inputs: frozenset[str] = frozenset()  # inputs that get an edge of the grad_fn
    saves_outputs: frozenset[int] = frozenset()
    returns: int = 1  # how many tensors the op returns as a tuple (`topk` → 2)
    returns_list: bool = False  # the one return is a list of tensors (`unbind`, `_foreach_*`)
    method: bool = False  # also a method of Tensor (`x.add(y)`), not only `torch.add`
    nondifferentiable_outputs: frozenset[int] = frozenset()  # outputs no gradient flows through (`topk`'s indices)
    returns_tensor: bool = True  # False for a Python number, bool or nothing (`numel`, `item`)
    # A composite of one tensor that torch traces into one differentiable op: (that op, the argument
    # its `self` becomes) — `special_expit` → ("sigmoid", "self"), `linalg_eigh` → ("_linalg_eigh", "A").
    traced_kernel: tuple[str, str] | None = None
    # A composite's saves as torch's runs of it show them: each saved input with the inputs whose
    # requiring grad saves it (None: any), saved outputs, or every tensor when they depend on other
    # arguments or the backend (`saves_vary`).
    derived_saves: Mapping[str, frozenset[str] | None] | None = field(default=None, hash=False)
    derived_outputs: frozenset[int] = frozenset()
    saves_vary: bool = False
    saves_certain: bool = True  # False: what it saves is a guess (`saves_vary`), its findings warnings at most

    def saved_inputs(self, requires_grad: Mapping[str, bool]) -> frozenset[str]:
        """Inputs saved by reference (so mutating them later breaks backward).

        ``requires_grad`` maps argument names to whether that tensor requires grad; missing names
        count as False. Nothing is saved unless a differentiable input requires grad.
        """
        if not self.differentiable or self.composite:
            return frozenset()
        if not any(requires_grad.get(a, False) for a in self.grad_inputs):
            return frozenset()
        return frozenset(
            arg
            for arg, cond in self.saves.items()
            if not (self.saves_clone and arg == "self")
            and (cond is None or any(requires_grad.get(c, False) for c in cond))
        )


def _conditions(saves: Mapping[str, Any]) -> Mapping[str, frozenset[str] | None]:
    """A table's `{"x": "*", "y": ["x"]}`: each saved input with the inputs whose requiring grad saves it."""
    return MappingProxyType({arg: None if cond == "*" else frozenset(cond) for arg, cond in saves.items()})


def _facts(name: str, rec: Mapping[str, Any]) -> OpFacts:
    tensor_args = frozenset(rec["tensor_args"])
    outputs = frozenset(rec.get("saves_outputs", [0] if rec.get("saves_result") else []))
    derived: Mapping[str, Any] | None = rec.get("derived")
    derived_saves = None if derived is None else _conditions(derived.get("saves", {}))
    return OpFacts(
        name=name,
        args=tuple(rec["args"]),
        tensor_args=tensor_args,
        saves=_conditions(rec.get("saves", {})),
        saves_result=bool(rec.get("saves_result", False)),
        kind=rec["kind"],
        mutates=tuple(rec.get("mutates", ())),
        saves_clone=bool(rec.get("saves_clone", False)),
        view_of=rec.get("view_of"),
        multi_output_view=bool(rec.get("multi_output_view", False)),
        composite=bool(rec.get("composite", False)),
        # a composite whose runs never give a gradient (integer or bool results: `greater.Scalar`)
        differentiable=bool(rec.get("differentiable", True)) and not (derived or {}).get("no_grad", False),
        grad_inputs=frozenset(rec.get("grad_inputs", tensor_args)),
        saves_outputs=outputs,
        returns=int(rec.get("returns", 1)),
        returns_list=bool(rec.get("returns_list", False)),
        method=bool(rec.get("method", False)),
        nondifferentiable_outputs=frozenset(rec.get("nondifferentiable_outputs", ())),
        returns_tensor=bool(rec.get("returns_tensor", True)),
        traced_kernel=(rec["kernel"]["op"], rec["kernel"]["args"]["self"]) if "kernel" in rec else None,
        derived_saves=derived_saves,
        derived_outputs=frozenset((derived or {}).get("saves_outputs", ())),
        saves_vary=bool((derived or {}).get("varies", False)),
    )


@cache
def _load() -> tuple[str, Mapping[str, OpFacts], Mapping[str, tuple[tuple[str, ...], tuple[str | None, ...],
                                                                   tuple[str, ...]]]]:
    data = json.loads(_TABLE.read_text(encoding="utf-8"))
    ops = {name: _facts(name, rec) for name, rec in data["ops"].items()}
    signatures = {name: (tuple(python), tuple(names), tuple(order))
                  for name, (python, names, order) in data.get("signatures", {}).items()}
    return data["torch_version"], MappingProxyType(ops), MappingProxyType(signatures)


def by_position(qualname: str, args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """A call of the Python function `qualname` (`torch.split`, `F.batch_norm`, `torch.Tensor.norm`) as
    the ATen op behind it takes it: its arguments, given by position or keyword as Python binds them,
    in the ATen order (`F.batch_norm(x, mean, var, w, b)` → `batch_norm(x, w, b, mean, var)`;
    `torch.split(tensor=v, split_size_or_sections=2)` → `(v, 2)`), the rest as ATen keywords. Calls of
    functions bound in C++ (which take the ATen names), or that give a Python-only parameter, are left
    as they are."""
    entry = _load()[2].get(qualname)
    if entry is None:
        return args, kwargs
    python, names, order = entry
    if len(args) > len(python):
        return args, kwargs
    bound: dict[str, Any] = {}
    for name, value in zip(names, args):
        if name is None:
            return args, kwargs
        bound[name] = value
    lookup = dict(zip(python, names))
    for key, value in kwargs.items():
        aten = lookup.get(key, key)  # a keyword-only one keeps its name (`dtype`, `out`)
        if aten is None:
            return args, kwargs
        bound[aten] = value
    placed = []
    for name in order:
        if name not in bound:
            break
        placed.append(bound.pop(name))
    return placed, bound


@cache
def _by_base() -> Mapping[str, tuple[OpFacts, ...]]:
    groups: dict[str, list[OpFacts]] = {}
    for facts in _load()[1].values():
        if facts.kind != "out":
            groups.setdefault(facts.name.split(".", 1)[0], []).append(facts)
    return MappingProxyType({base: tuple(group) for base, group in groups.items()})


def load() -> None:
    """Read the op table now instead of at the first lookup (a language server reads it while the
    editor starts, so that the first document's diagnostics do not wait for it)."""
    _by_base()


def op(name: str) -> OpFacts | None:
    """Facts for an exact overload key (``"mul.Tensor"``, ``"relu_"``), or None if unknown."""
    return _load()[1].get(name)


def overloads(base: str) -> tuple[OpFacts, ...]:
    """Every non-``out=`` overload named ``base`` (``"mul"`` -> mul.Tensor, mul.Scalar).

    In-place overloads have their own base (``"mul_"``).
    """
    return _by_base().get(base, ())


def kernel_of(composite: OpFacts) -> OpFacts | None:
    """The overload of the same name whose grad_fn a composite overload records, if there is one:
    the one non-composite functional sibling taking every tensor the composite takes
    (``std.dim`` and ``std`` record ``std.correction``'s ``StdBackward0``)."""
    if not (composite.composite and composite.differentiable):
        return None
    siblings = [facts for facts in overloads(composite.name.split(".", 1)[0])
                if facts.kind == "functional" and not facts.composite and facts.differentiable
                and composite.tensor_args <= facts.tensor_args]
    return siblings[0] if len(siblings) == 1 else None


@cache
def derived_of(composite: OpFacts) -> OpFacts | None:
    """A composite's saves as torch's runs of it on sample inputs showed them, as facts of a kernel of
    its own: each saved input saved when one of the inputs it names requires grad (`cross`'s `other`
    when `self` does). With `saves_vary` (`einsum`, `cdist`), every tensor argument may be saved, and
    its outputs too when the kernel depends on the backend (`scaled_dot_product_attention`'s flash
    kernels save theirs): saves not certain. None without such facts."""
    if not (composite.composite and composite.differentiable) or composite.derived_saves is None:
        return None
    if composite.saves_vary:
        saves: Mapping[str, frozenset[str] | None] = {arg: None for arg in sorted(composite.tensor_args)}
        backend = composite.name.split(".", 1)[0] in surface.BACKEND_DEPENDENT
        outputs = frozenset(range(max(composite.returns, 1))) if backend else frozenset()
    else:
        saves, outputs = composite.derived_saves, composite.derived_outputs
    return replace(composite, composite=False, saves=MappingProxyType(dict(saves)),
                   saves_result=0 in outputs, saves_outputs=outputs, saves_certain=not composite.saves_vary)


def torch_version() -> str:
    """The torch version the table was generated from."""
    return _load()[0]


class TorchVersion(str):
    """`torch.__version__` as the analysis knows it (the table's torch): a string that, like torch's
    own `TorchVersion`, compares with version strings and tuples by release numbers
    (`torch.__version__ >= "2.1"`), not as text."""

    def _release(self) -> tuple[int, ...]:
        return _release_of(str(self))

    def __lt__(self, other: object) -> bool:
        return self._release() < _release_of(other)

    def __le__(self, other: object) -> bool:
        return self._release() <= _release_of(other)

    def __gt__(self, other: object) -> bool:
        return self._release() > _release_of(other)

    def __ge__(self, other: object) -> bool:
        return self._release() >= _release_of(other)

    __hash__ = str.__hash__


def _release_of(version: object) -> tuple[int, ...]:
    """The release numbers of a version string (`"2.1.0a0+git"` -> (2, 1, 0)) or tuple."""
    if isinstance(version, tuple):
        return tuple(int(part) for part in version)
    numbers: list[int] = []
    for part in str(version).split("+")[0].split("."):
        digits = part[:len(part) - len(part.lstrip("0123456789"))]
        if not digits:
            break
        numbers.append(int(digits))
        if digits != part:
            break
    return tuple(numbers)


def known_torch_version() -> TorchVersion:
    """`torch.__version__` for the analysis: the version the table was generated from."""
    return TorchVersion(torch_version())
