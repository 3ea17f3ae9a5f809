#!/usr/bin/env python
"""Generate server/gradguard/knowledge/ops.json: what each ATen overload saves for backward.

The facts come from the installed torch's own code generator (torchgen), not from a home-made
parse of derivatives.yaml:

* ``load_derivatives`` decides which names in a formula are tensors saved as ``SavedVariable``
  and which are metadata (``self.sym_sizes()``, ``self.scalar_type()``, ...);
* ``match_differentiability_info`` gives in-place and ``out=`` variants their formula;
* ``gen_variable_type.emit_body`` produces the exact C++ body of the autograd kernel. Its
  ``grad_fn->x_ = SavedVariable(...)`` statements and their
  ``if (grad_fn->should_compute_output(k))`` guards say what is saved, and when.

Usage: generate_op_table.py [OUT_PATH]   (default: server/gradguard/knowledge/ops.json)
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import re
import sys
from typing import Any

import torchgen
from torchgen.api import cpp
from torchgen.api.autograd import (
    NativeFunctionWithDifferentiabilityInfo,
    match_differentiability_info,
)
from torchgen.gen import parse_native_yaml
from torchgen.model import BackendIndex, DispatchKey, NativeFunction, SchemaKind, Variant
from torchgen.packaged.autograd import gen_variable_type
from torchgen.packaged.autograd.gen_inplace_or_view_type import use_derived
from torchgen.packaged.autograd.gen_trace_type import MANUAL_AUTOGRAD
from torchgen.packaged.autograd.load_derivatives import load_derivatives

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "server", "gradguard", "knowledge", "ops.json")

_PACKAGED = os.path.join(os.path.dirname(torchgen.__file__), "packaged")
NATIVE_YAML = os.path.join(_PACKAGED, "ATen", "native", "native_functions.yaml")
TAGS_YAML = os.path.join(_PACKAGED, "ATen", "native", "tags.yaml")
DERIVATIVES_YAML = os.path.join(_PACKAGED, "autograd", "derivatives.yaml")

# Kernels that decide which backend actually runs on CPU / CUDA tensors.
_DENSE_KEYS = (
    DispatchKey.CompositeExplicitAutograd,
    DispatchKey.CompositeExplicitAutogradNonFunctional,
)

# Composite ops whose C++ decomposition (aten/src/ATen/native/TensorShape.cpp) calls an op
# that creates MULTI_OUTPUT_NODE views, so their outputs may not be modified in place either.
# Other composite Tensor(a)[] ops (tensor_split, hsplit, vsplit, dsplit) decompose into slice.
_COMPOSITE_MULTI_OUTPUT_VIEWS = {"chunk", "split.sizes"}

# The Python namespaces whose composite functions of one tensor are traced to the op they record.
_TRACED_NAMESPACES = ("linalg_", "special_", "fft_")

# Hand-written autograd kernels (torch/csrc/autograd/VariableTypeManual.cpp) that have a
# backward: copy_ records CopyBackwards (which saves no tensor).
_MANUAL_DIFFERENTIABLE = {"copy_"}

_SAVE_RE = re.compile(
    r"grad_fn->(?P<field>\w+)_ = "
    r"(?:SavedVariable|make_saved_variable_list)\((?P<expr>[^,]+), (?P<is_output>true|false)"
)
_EDGES_RE = re.compile(r"collect_next_edges\((?P<args>[^)]*)\)")
_SHOULD_COMPUTE_RE = re.compile(r"grad_fn->should_compute_output\((\d+)\)")
# Guards that only mean "a grad_fn is being recorded".
_RECORDING_GUARDS = {
    "_any_requires_grad",
    "grad_fn",
    "!grad_fns.empty()",
    "grad_fn != nullptr",
    "const auto& i : c10::irange(grad_fns.size())",
}


def _version() -> str:
    """torch's public version, without the local build tag (+cpu, +cu128): same yaml."""
    return importlib.metadata.version("torch").split("+")[0]


def _has_dense_kernel(f: NativeFunction, indices: dict[DispatchKey, BackendIndex]) -> bool:
    keys = (DispatchKey.CPU, DispatchKey.CUDA) + _DENSE_KEYS
    return any(k in indices and indices[k].has_kernel(f) for k in keys)


def _decomposes(f: NativeFunction, indices: dict[DispatchKey, BackendIndex]) -> bool:
    """CompositeImplicitAutograd wins over an Autograd formula when CPU/CUDA have no kernel."""
    return f.has_composite_implicit_autograd_kernel and not _has_dense_kernel(f, indices)


def _parse_kernel(body: list[str]) -> tuple[list[str], list[tuple[str, str, bool, list[int] | None]]]:
    """Return (edges, saves) from an emitted autograd kernel body.

    edges: the inputs given to ``collect_next_edges`` (edge k = should_compute_output(k)).
    saves: (field, expression, is_output, guard edge offsets or None when unguarded).
    """
    edges: list[str] = []
    saves = []
    stack: list[str] = []
    for line in "\n".join(body).split("\n"):
        s = line.strip()
        if s.startswith("}"):
            stack.pop()
        if s.endswith("{"):
            m = re.match(r"(?:\}\s*else\s*)?(?:if|for)\s*\((.*)\)\s*\{$", s)
            stack.append(m.group(1).strip() if m else s)
        m = _EDGES_RE.search(s)
        if m and not edges:
            edges = [a.strip().removesuffix("[i]") for a in m.group("args").split(",") if a.strip()]
        m = _SAVE_RE.search(s)
        if m is None:
            continue
        offsets: list[int] | None = None
        for cond in stack:
            if cond in _RECORDING_GUARDS:
                continue
            parts = [p.strip() for p in cond.split("||")]
            found = [_SHOULD_COMPUTE_RE.fullmatch(p) for p in parts]
            if not all(found):
                raise ValueError(f"unexpected guard around a save: {cond!r}")
            if offsets is not None:
                raise ValueError(f"nested should_compute_output guards: {stack!r}")
            offsets = sorted(int(g.group(1)) for g in found)  # type: ignore[union-attr]
        saves.append((m.group("field"), m.group("expr"), m.group("is_output") == "true", offsets))
    return edges, saves


def _view_of(f: NativeFunction) -> str | None:
    """The argument whose alias a non-writing ``Tensor(a)`` return is."""
    for ret in f.func.returns:
        ann = ret.annotation
        if ann is None or ann.is_write:
            continue
        for arg in f.func.arguments.flat_all:
            if arg.annotation is not None and arg.annotation.alias_set == ann.alias_set:
                return arg.name
    return None


def _record(fn: NativeFunctionWithDifferentiabilityInfo, indices: dict[DispatchKey, BackendIndex]) -> dict[str, Any]:
    f = fn.func
    schema = f.func
    name = str(schema.name)
    schema_kind = schema.kind()
    args = [a.name for a in schema.arguments.flat_all]
    tensor_args = [a.name for a in schema.arguments.flat_all if a.type.is_tensor_like()]
    rec: dict[str, Any] = {"args": args, "tensor_args": tensor_args}
    kind = {SchemaKind.functional: "functional", SchemaKind.inplace: "inplace", SchemaKind.out: "out"}.get(
        schema_kind, "mutable"
    )
    rec["kind"] = kind
    if Variant.method in f.variants:
        rec["method"] = True
    if not any(r.type.is_tensor_like() for r in schema.returns):
        rec["returns_tensor"] = False  # a Python number, bool or nothing (`numel`, `is_nonzero`, `item`)
    if len(schema.returns) > 1:
        rec["returns"] = len(schema.returns)
    elif schema.returns and schema.returns[0].type.is_list_like():
        rec["returns_list"] = True
    mutates = [a.name for a in schema.arguments.flat_all if a.annotation is not None and a.annotation.is_write]
    if mutates:
        rec["mutates"] = mutates
    view_of = _view_of(f)
    if view_of is not None:
        rec["view_of"] = view_of
        is_list = any(r.annotation is not None and r.type.is_list_like() for r in schema.returns)
        if is_list and (not _decomposes(f, indices) or name in _COMPOSITE_MULTI_OUTPUT_VIEWS):
            rec["multi_output_view"] = True

    if _decomposes(f, indices):
        # No grad_fn of its own on CPU/CUDA: what is saved comes from the decomposition.
        rec["composite"] = True
        rec["decomposes"] = True
        if kind == "out":
            rec["differentiable"] = False
        return rec
    if kind == "out":
        # The kernel raises "out=... arguments don't support automatic differentiation".
        rec["differentiable"] = False
        return rec
    if cpp.name(schema) in MANUAL_AUTOGRAD:
        if cpp.name(schema) not in _MANUAL_DIFFERENTIABLE:
            rec["differentiable"] = False
        return rec
    info = (fn.info or {}).get("Default")
    if not use_derived(fn) or info is None or not info.has_derivatives:
        # No formula for dense tensors: no grad_fn, or a NotImplemented one whose backward raises.
        rec["differentiable"] = False
        return rec

    if info.output_differentiability is not None and not all(info.output_differentiability):
        rec["nondifferentiable_outputs"] = [i for i, d in enumerate(info.output_differentiability) if not d]
    edges, saves = _parse_kernel(gen_variable_type.emit_body(fn, "Default"))
    if not edges:
        raise ValueError(f"{name}: derivative formula but no collect_next_edges")
    if sorted(set(edges)) != sorted(tensor_args):
        rec["grad_inputs"] = sorted(set(edges))
    return_names = list(cpp.return_names(f))
    saved: dict[str, Any] = {}
    saved_outputs: set[int] = set()
    for field, expr, is_output, offsets in saves:
        if is_output:
            if kind == "inplace" and field == "result":
                saved_outputs.add(0)
            elif field in return_names:
                saved_outputs.add(return_names.index(field))
            else:
                raise ValueError(f"{name}: saved output {field!r} is not a return")
            continue
        # The expression names the argument (foreach kernels keep the reference op's field name).
        if "original_self" in expr:
            arg, rec["saves_clone"] = "self", True
        else:
            arg = expr.removesuffix("[i]")
        if arg not in args:
            raise ValueError(f"{name}: saved input {expr!r} is not an argument")
        if offsets is None or {edges[k] for k in offsets} == set(edges):
            saved[arg] = "*"
        else:
            saved[arg] = sorted({edges[k] for k in offsets})
    if saved:
        rec["saves"] = saved
    if 0 in saved_outputs:
        rec["saves_result"] = True
    if saved_outputs - {0}:
        rec["saves_outputs"] = sorted(saved_outputs)
    return rec


def _traced_kernel(name: str, ops: dict[str, Any]) -> dict[str, Any] | None:
    """The one differentiable op a composite overload of one tensor decomposes into, traced by
    torch (`make_fx`) on a real and a complex sample: `{"op": "sigmoid", "args": {"self": "self"}}`
    (the composite's tensor → the argument it becomes), or None when the samples disagree (`fft_fft`:
    `_fft_r2c` or `_fft_c2c`), a trace holds no single such op, or no sample suits the op."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    base, _, overload = name.partition(".")
    packet = getattr(torch.ops.aten, base)
    function = getattr(packet, overload or "default")
    found = set()
    for dtype in (torch.float64, torch.complex128):
        try:
            graph = make_fx(function)(torch.randn(3, 3, dtype=dtype)).graph
        except Exception:  # a sample of this kind does not suit the op (`erf` of a complex tensor)
            continue
        calls = [n for n in graph.nodes if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)]
        kernels = []
        for call in calls:
            target = call.target.name().removeprefix("aten::").replace(".default", "")
            rec = ops.get(target, {})
            if rec.get("differentiable", True) and not rec.get("composite") and target in ops:
                arg = next((ops[target]["args"][i] for i, a in enumerate(call.args)
                            if getattr(a, "op", None) == "placeholder"), None)
                kernels.append((target, arg))
        if len(kernels) != 1 or kernels[0][1] is None:
            return None
        found.add(kernels[0])
    if len(found) != 1:
        return None
    target, arg = found.pop()
    return {"op": target, "args": {"self": arg}}


# Composites whose saves depend on the kernel torch picks at run time (the fused attention kernels
# of the device, the math fallback), not on their arguments alone: every tensor counts as saved.
_BACKEND_DEPENDENT = {"scaled_dot_product_attention"}  # knowledge/surface.py: BACKEND_DEPENDENT


def _op_db() -> dict[str, list[Any]]:
    """torch's OpInfo database by ATen name and by the last part of the OpInfo's name."""
    try:
        import expecttest  # noqa: F401  (torch's test utilities import it)
    except ImportError:  # only its TestCase base class is needed to import the database
        import types
        import unittest
        sys.modules["expecttest"] = types.SimpleNamespace(TestCase=unittest.TestCase)  # type: ignore[assignment]
    from torch.testing._internal.common_methods_invocations import op_db

    by_name: dict[str, list[Any]] = {}
    for info in op_db:
        for key in {info.aten_name, info.name.rsplit(".", 1)[-1]}:
            by_name.setdefault(key, []).append(info)
    return by_name


def _tensors_of(value: Any) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors_of(item)]
    return []


def _storages(value: Any) -> set[int]:
    return {t.untyped_storage().data_ptr() for t in _tensors_of(value) if t.untyped_storage().nbytes()}


def _saved_by_call(call: Any, bound: dict[str, Any]) -> tuple[set[str], int] | None:
    """Run `call()` under autograd and name what its graph saves: the arguments of `bound` and the
    outputs (`"0"`, `"1"`, ...) whose storage a saved tensor shares (a view of them, or themselves).
    Returns (those names, the number of outputs), or None when the call fails on this sample."""
    import torch

    packed: list[Any] = []

    def pack(t: Any) -> Any:
        packed.append(t)
        return t

    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            result = call()
        outputs = list(result) if isinstance(result, (list, tuple)) else [result]
        owners = {name: _storages(value) for name, value in bound.items()}
        owners.update({str(i): _storages(out) for i, out in enumerate(outputs)})
        saved = _storages(packed)
    except Exception:  # the sample does not suit this overload (or holds sparse tensors)
        return None
    return {name for name, ptrs in owners.items() if ptrs & saved}, len(outputs)


def _bind_sample(schema: Any, sample: Any) -> dict[str, Any] | None:
    """The sample's tensors by the schema's argument names: the k-th tensor (or list of tensors)
    of `input, *args, **kwargs` is the k-th tensor argument; None when that does not line up."""
    tensor_args = [a for a in schema.arguments if "Tensor" in str(a.type)]
    given = [v for v in (sample.input, *sample.args, *sample.kwargs.values()) if _tensors_of(v)]
    if len(given) > len(tensor_args) or any("?" not in str(a.type) for a in tensor_args[len(given):]):
        return None
    return {a.name: v for a, v in zip(tensor_args, given)}


def _fallback_samples(schema: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Hand-made samples from the schema alone: a random tensor for every tensor argument (lists
    of two), defaults for the rest; none when another argument has no default."""
    import torch

    samples = []
    for shape in ((3, 3), (2, 3, 4), (4,)):
        kwargs: dict[str, Any] = {}
        for a in schema.arguments:
            kind = str(a.type)
            if "Tensor" in kind:
                t = lambda: torch.randn(shape, dtype=torch.float64, requires_grad=True)  # noqa: E731
                kwargs[a.name] = [t(), t()] if "[]" in kind else t()
            elif not a.has_default_value():
                return []
        samples.append(((), kwargs))
    return samples


def _derived_saves(name: str, rec: dict[str, Any], db: dict[str, list[Any]]) -> dict[str, Any] | None:
    """What a composite overload's graph saves, all its inputs requiring grad, read from torch running
    it on OpInfo samples (on samples made from its schema where no OpInfo exists): `{"saves": [args],
    "saves_outputs": [indices]}`, `{"varies": True}` when samples with the same tensors disagree
    (`cdist`'s `compute_mode`) or the kernel depends on the backend, None when no sample runs."""
    import torch

    base, _, overload = name.partition(".")
    if base in _BACKEND_DEPENDENT:
        return {"varies": True}
    function = getattr(getattr(torch.ops.aten, base), overload or "default")
    schema = function._schema
    runs: list[tuple[set[str], set[str]]] = []  # (tensor arguments given, names saved)
    infos = db.get(base, [])
    for info in infos:
        try:
            samples = list(info.sample_inputs("cpu", torch.float64, requires_grad=True))[:6]
        except Exception:
            continue
        for sample in samples:
            bound = _bind_sample(schema, sample)
            if bound is None:
                continue
            found = _saved_by_call(lambda: info.op(sample.input, *sample.args, **sample.kwargs), bound)
            if found is not None:
                runs.append((set(bound), found[0]))
    if not runs and not base.startswith("_"):  # private ops' checks are the caller's: random inputs can crash
        for args, kwargs in _fallback_samples(schema):
            tensors = {k: v for k, v in kwargs.items() if _tensors_of(v)}
            found = _saved_by_call(lambda: function(*args, **kwargs), tensors)
            if found is not None:
                runs.append((set(tensors), found[0]))
    if not runs:
        return None
    for given, saved in runs:
        for other_given, other_saved in runs:
            common = given & other_given | {n for n in saved | other_saved if n.isdigit()}
            if saved & common != other_saved & common:
                return {"varies": True}
    saved = set().union(*(s for _, s in runs))
    derived: dict[str, Any] = {"saves": sorted(n for n in saved if not n.isdigit())}
    derived["saves_outputs"] = sorted(int(n) for n in saved if n.isdigit())
    return derived


def _needs_derived_saves(rec: dict[str, Any]) -> bool:
    return bool(rec.get("composite")) and rec.get("differentiable", True) and rec["kind"] == "functional"


def derive_composite_saves(ops: dict[str, Any], names: Any = None) -> None:
    """Add `derived` save facts to the differentiable composite functionals (those of `names` only)."""
    import torch

    db = _op_db()
    torch.manual_seed(0)
    for name, rec in ops.items():
        if _needs_derived_saves(rec) and (names is None or name in names):
            derived = _derived_saves(name, rec, db)
            if derived is not None:
                rec["derived"] = derived


def build_table(derive: bool = True) -> dict[str, Any]:
    """Build the op table from the installed torch's torchgen data; the composite functions of one
    tensor in `torch.linalg`, `torch.special` and `torch.fft` name the op torch traces them into."""
    infos, _ = load_derivatives(DERIVATIVES_YAML, NATIVE_YAML, TAGS_YAML)
    parsed = parse_native_yaml(NATIVE_YAML, TAGS_YAML)
    fns = match_differentiability_info(parsed.native_functions, infos)
    ops = {str(fn.func.func.name): _record(fn, parsed.backend_indices) for fn in fns}
    for name, rec in ops.items():
        if (name.startswith(_TRACED_NAMESPACES) and rec.get("composite") and rec["kind"] == "functional"
                and rec["tensor_args"] == ["self"]):
            kernel = _traced_kernel(name, ops)
            if kernel is not None:
                rec["kernel"] = kernel
    if derive:
        derive_composite_saves(ops)
    return {"torch_version": _version(), "ops": dict(sorted(ops.items()))}


def dumps(table: dict[str, Any]) -> str:
    """Serialize deterministically: one op per line, sorted keys, no spaces."""
    lines = ["{", f'"torch_version": {json.dumps(table["torch_version"])},', '"ops": {']
    items = sorted(table["ops"].items())
    for i, (name, rec) in enumerate(items):
        sep = "," if i < len(items) - 1 else ""
        lines.append(f"{json.dumps(name)}: {json.dumps(rec, sort_keys=True, separators=(',', ':'))}{sep}")
    lines += ["}", "}", ""]
    return "\n".join(lines)


def main(out_path: str = DEFAULT_OUT) -> None:
    """Regenerate the table and write it to out_path."""
    table = build_table()
    with open(out_path, "w", encoding="utf-8") as fh:
        fh.write(dumps(table))
    print(f"wrote {out_path}: {len(table['ops'])} ops, torch {table['torch_version']}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
