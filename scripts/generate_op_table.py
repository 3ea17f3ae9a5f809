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
import zlib
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
        # The same sample at every run: a random one let `linalg_cholesky` trace only when it
        # happened to be positive definite, so the table changed from run to run.
        torch.manual_seed(zlib.crc32(name.encode()))
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
    """torch's OpInfo database by ATen name, by the last part of the OpInfo's name and by its aliases'."""
    try:
        import expecttest  # noqa: F401  (torch's test utilities import it)
    except ImportError:  # only its TestCase base class is needed to import the database
        import types
        import unittest
        sys.modules["expecttest"] = types.SimpleNamespace(TestCase=unittest.TestCase)  # type: ignore[assignment]
    from torch.testing._internal.common_methods_invocations import op_db

    by_name: dict[str, list[Any]] = {}
    for info in op_db:
        names = {info.aten_name, info.name.rsplit(".", 1)[-1], info.name.replace(".", "_"),
                 *(a.name.rsplit(".", 1)[-1] for a in info.aliases)}
        for key in names:
            by_name.setdefault(key, []).append(info)
    return by_name


def _tensors_of(value: Any) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors_of(item)]
    return []


def _parts(t: Any) -> list[Any]:
    """The strided tensors that hold a tensor's data (a sparse tensor's indices and values)."""
    import torch

    if t.layout == torch.strided:
        return [t]
    if t.layout == torch.sparse_coo:
        return [t._indices(), t._values()]
    if t.layout in (torch.sparse_csr, torch.sparse_bsr):
        return [t.crow_indices(), t.col_indices(), t.values()]
    if t.layout in (torch.sparse_csc, torch.sparse_bsc):
        return [t.ccol_indices(), t.row_indices(), t.values()]
    return []


def _storages(value: Any) -> set[int]:
    return {part.untyped_storage().data_ptr() for t in _tensors_of(value) for part in _parts(t)
            if part.untyped_storage().nbytes()}


def _sparse_layouts() -> list[Any]:
    """A 4×4 matrix with zeros, in every sparse layout, its values requiring grad."""
    import torch

    dense = torch.rand(4, 4) * (torch.rand(4, 4) > 0.4)  # the default dtype: a constructor given none checks it
    return [dense.to_sparse(), dense.to_sparse_csr(), dense.to_sparse_csc(), dense.to_sparse_bsr((2, 2)),
            dense.to_sparse_bsc((2, 2))]


def _component_samples(schema: Any) -> list[dict[str, Any]]:
    """Samples of a constructor of sparse tensors, made of a sparse tensor's own parts named as its
    arguments are (`crow_indices`, `col_indices`, `values`, `size`)."""
    import torch

    samples = []
    for layout in _sparse_layouts():
        compressed = (layout.crow_indices() if layout.layout in (torch.sparse_csr, torch.sparse_bsr)
                      else layout.ccol_indices()) if layout.layout != torch.sparse_coo else None
        plain = (layout.col_indices() if layout.layout in (torch.sparse_csr, torch.sparse_bsr)
                 else layout.row_indices()) if layout.layout != torch.sparse_coo else None
        parts: dict[str, Any] = {"values": layout.values().detach().clone().requires_grad_(), "size": list(layout.shape)}
        if layout.layout == torch.sparse_coo:
            parts["indices"] = layout._indices()
        else:
            parts.update(compressed_indices=compressed, plain_indices=plain)
            parts["crow_indices" if layout.layout in (torch.sparse_csr, torch.sparse_bsr) else "ccol_indices"] = compressed
            parts["col_indices" if layout.layout in (torch.sparse_csr, torch.sparse_bsr) else "row_indices"] = plain
        needed = [a for a in schema.arguments if "Tensor" in str(a.type) or not a.has_default_value()]
        if needed and all(a.name in parts for a in needed):
            samples.append({a.name: parts[a.name] for a in needed})
    return samples


def _detached_but(value: Any, kept: set[int] | None) -> Any:
    """`value` with every tensor not in `kept` (by id) detached: the same storage, no grad (all
    left as they are when `kept` is None)."""
    import torch

    if kept is None:
        return value
    if isinstance(value, torch.Tensor):
        return value if id(value) in kept else value.detach()
    if isinstance(value, (list, tuple)):
        return type(value)(_detached_but(item, kept) for item in value)
    if isinstance(value, dict):
        return {key: _detached_but(item, kept) for key, item in value.items()}
    return value


class _Run:
    """One sample of an op run under autograd: which of its tensor arguments (`given`) and outputs
    (`"0"`, `"1"`, ...) share storage with a tensor its graph saved, with all of them requiring grad
    (`saved`) and with only one (`alone[arg]`); `recorded`: whether an output has a grad_fn."""

    def __init__(self, call: Any, bound: dict[str, Any]) -> None:
        self.call, self.bound = call, bound
        self.given = set(bound)
        self.saved: set[str] = set()
        self.recorded = False
        self.floating = False  # an output has a floating or complex dtype, which can require grad
        self.alone: dict[str, set[str]] = {}

    def run(self) -> bool:
        """Run it (False when the sample does not suit the op, or has an empty tensor, whose storage
        cannot be told apart), then once per argument that requires grad."""
        if any(part.numel() == 0 for t in _tensors_of(list(self.bound.values())) for part in _parts(t)):
            return False
        found = self._saved(None)
        if found is None:
            return False
        self.saved, self.recorded, self.floating = found
        for name, value in self.bound.items():
            if any(t.requires_grad for t in _tensors_of(value)):
                alone = self._saved({id(t) for t in _tensors_of(value)})
                self.alone[name] = alone[0] if alone is not None else self.saved
        return True

    def _saved(self, kept: set[int] | None) -> tuple[set[str], bool, bool] | None:
        import torch

        packed: list[Any] = []

        def pack(t: Any) -> Any:
            packed.append(t)
            return t

        try:
            with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                result = self.call(kept)
            outputs = list(result) if isinstance(result, (list, tuple)) else [result]
            owners = {name: _storages(value) for name, value in self.bound.items()}
            owners.update({str(i): _storages(out) for i, out in enumerate(outputs)})
            saved = _storages(packed)
        except Exception:  # the sample does not suit this overload (or holds sparse tensors)
            return None
        recorded = any(t.requires_grad for t in _tensors_of(outputs))
        floating = any(t.is_floating_point() or t.is_complex() for t in _tensors_of(outputs))
        return {name for name, ptrs in owners.items() if ptrs & saved}, recorded, floating


def _bind_sample(schema: Any, sample: Any, op: Any) -> dict[str, Any] | None:
    """The sample's tensors by the schema's argument names: by the Python signature of `op` where it
    has one (`F.batch_norm`'s order is not ATen's), else the k-th tensor (or list of tensors) of
    `input, *args, **kwargs` as the k-th tensor argument; None when that does not line up."""
    import inspect

    aten = [a.name for a in schema.arguments]
    python = _python_parameters(op)
    if python is not None:
        try:
            given = inspect.signature(op).bind(sample.input, *sample.args, **sample.kwargs).arguments
        except TypeError:
            return None
        names = dict(zip(python, _aten_names(python, aten)))
        bound = {names.get(name): value for name, value in given.items() if _tensors_of(value)}
        if None not in bound:
            return bound
    tensor_args = [a for a in schema.arguments if "Tensor" in str(a.type)]
    given = [v for v in (sample.input, *sample.args, *sample.kwargs.values()) if _tensors_of(v)]
    if len(given) > len(tensor_args) or any("Optional" not in str(a.type) for a in tensor_args[len(given):]):
        return None
    return {a.name: v for a, v in zip(tensor_args, given)}


def _bind_call(schema: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """A call's tensors by the names of `schema`'s arguments, None when the call does not fit it."""
    import torch

    if len(args) > len(schema.arguments) or set(kwargs) - {a.name for a in schema.arguments}:
        return None
    bound: dict[str, Any] = {}
    for position, a in enumerate(schema.arguments):
        if position < len(args):
            value = args[position]
        elif a.name in kwargs:
            value = kwargs[a.name]
        elif a.has_default_value():
            continue
        else:
            return None
        kind = str(a.type)
        tensors = _tensors_of(value)
        if "Tensor" in kind:
            if value is None and kind.startswith("Optional["):
                continue
            if not tensors or (isinstance(value, torch.Tensor) != ("List" not in kind)):
                return None
            bound[a.name] = value
        elif tensors:
            return None
    return bound


def _run_recurrent_layers() -> None:
    """Every recurrent layer on a padded batch and on a packed one (`lstm.data`, `rnn_tanh.input`, ...)."""
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence

    for layer in (torch.nn.RNN(3, 4), torch.nn.RNN(3, 4, nonlinearity="relu"), torch.nn.LSTM(3, 4),
                  torch.nn.GRU(3, 4)):
        layer.to(torch.float64)
        x = torch.rand(5, 2, 3, dtype=torch.float64, requires_grad=True)
        layer(x)
        layer(pack_padded_sequence(x, [5, 3]))


def _observed_calls(bases: set[str]) -> dict[str, list[tuple[Any, tuple[Any, ...], dict[str, Any]]]]:
    """The calls of the functions named `bases` that torch's own code makes while its OpInfo and
    ModuleInfo samples run (`F.nll_loss` calls `nll_loss_nd`, `nn.LSTM` calls `torch._VF.lstm`):
    samples of ops whose arguments no schema alone can make."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.common_modules import module_db

    seen: dict[str, list[tuple[Any, tuple[Any, ...], dict[str, Any]]]] = {}
    namespaces = [torch, torch._VF, torch._C._nn, torch._C._linalg, torch._C._special, torch._C._fft,
                  torch.nn.functional]
    patched: list[tuple[Any, str, Any]] = []

    def recorder(base: str, original: Any) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            if len(seen.setdefault(base, [])) < 6:
                seen[base].append((original, args, kwargs))
            return original(*args, **kwargs)
        return record

    for namespace in namespaces:
        for base in bases:
            original = getattr(namespace, base, None)
            if original is not None and callable(original):
                patched.append((namespace, base, original))
                setattr(namespace, base, recorder(base, original))
    try:
        for info in op_db:
            try:
                for sample in list(info.sample_inputs("cpu", torch.float64, requires_grad=True))[:3]:
                    info.op(sample.input, *sample.args, **sample.kwargs)
            except Exception:  # a sample torch's own tests expect to fail, or a skipped dtype
                continue
        _run_recurrent_layers()
        for module in module_db:
            try:
                inputs = module.module_inputs_func(module, device="cpu", dtype=torch.float64, requires_grad=True,
                                                   training=True)
                for given in inputs[:3]:
                    if given.forward_input is None:
                        continue
                    made = module.module_cls(*given.constructor_input.args, **given.constructor_input.kwargs)
                    made.to(torch.float64)(*given.forward_input.args, **given.forward_input.kwargs)
            except Exception:
                continue
    finally:
        for namespace, base, original in patched:
            setattr(namespace, base, original)
    return seen


def _candidates(kind: str) -> list[Any]:
    """Values to try for an argument of schema type `kind` that has no default."""
    import torch

    if kind.startswith("Optional["):
        return [None, *_candidates(kind[len("Optional["):-1])]
    return {
        "int": [1, 0, 2, 4], "SymInt": [1, 0, 2, 4], "float": [0.5], "number": [2.0, 2], "bool": [False, True],
        "List[int]": [[1], [2, 2], [0], [2, 2, 2], [0, 1]], "List[SymInt]": [[1], [2, 2], [0], [2, 2, 2]],
        "List[float]": [[2.0], [2.0, 2.0], [2.0, 2.0, 2.0]], "str": ["mean", "valid"], "ScalarType": [torch.float64],
    }.get(kind, [])


_SHAPES = ((3, 3), (2, 3, 4), (4,), (1, 2, 3, 4), (2, 2, 2, 2), (1, 2, 3, 3, 4), (1, 2, 2, 2, 2))
# Ops that crash the process (not an exception) on samples made from their schema.
_CRASH_ON_MADE_SAMPLES = {"_pad_packed_sequence", "_thnn_differentiable_gru_cell_backward",
                          "_thnn_differentiable_lstm_cell_backward", "quantized_lstm_cell"}


def _fallback_samples(schema: Any, integral: bool = False) -> list[dict[str, Any]]:
    """Samples made from the schema alone: for every tensor argument a random tensor (lists of two) of
    several shapes, floating and requiring grad, one argument at a time integer or bool instead (an
    index, a mask); for the others their default or values of their type (optional ones too when
    their defaults do not run). `integral`: integer tensors only, which never require grad."""
    import itertools

    import torch

    def tensor(shape: tuple[int, ...], dtype: Any) -> Any:
        if dtype is None:
            return None
        if dtype == "sparse":
            return torch.rand(shape, dtype=torch.float64).to_sparse().requires_grad_() if len(shape) == 2 else None
        if dtype in (torch.float64, torch.complex128):
            return torch.rand(shape, dtype=dtype, requires_grad=True)
        return torch.randint(0, 2, shape).to(dtype)

    tensors = [a for a in schema.arguments if "Tensor" in str(a.type)]
    optional = {a.name for a in tensors if a.has_default_value()}  # absent (None) unless varied on its own
    every = [{a.name: None if a.name in optional else dtype for a in tensors} for dtype in (torch.float64, torch.complex128)]
    dtypes = [{a.name: None if a.name in optional else torch.int64 for a in tensors}] if integral else every + [
        {b.name: dtype if b is a else None if b.name in optional else torch.float64 for b in tensors}
        for a in tensors for dtype in (torch.float64, torch.int64, torch.bool, "sparse") if dtype is not torch.float64
        or a.name in optional]
    samples = []
    for given in (False, True):
        choices: list[list[tuple[str, Any]]] = []
        for a in schema.arguments:
            kind = str(a.type)
            if "Tensor" in kind or (a.has_default_value() and not (given and kind.startswith("Optional["))):
                continue
            values = _candidates(kind)
            if not values:
                return samples
            choices.append([(a.name, v) for v in values])
        if given and not any(len(c) > 1 and c[0][1] is None for c in choices):
            break
        for shape in _SHAPES:
            for kinds in dtypes:
                for others in itertools.islice(itertools.product(*choices), 12):
                    kwargs: dict[str, Any] = dict(others)
                    for a in tensors:
                        one = kinds[a.name]
                        kwargs[a.name] = [tensor(shape, one), tensor(shape, one)] if "List" in str(a.type) \
                            and one is not None else tensor(shape, one)
                    if not any(kinds[a.name] == "sparse" and (len(shape) != 2 or "List" in str(a.type)) for a in tensors):
                        samples.append(kwargs)
                        if any(isinstance(kwargs[a.name], list) for a in tensors):  # lists of one tensor too
                            samples.append({k: v[:1] if isinstance(v, list) and _tensors_of(v) else v
                                            for k, v in kwargs.items()})
    return samples


def _conditions(runs: list[_Run], saved: set[str]) -> dict[str, Any]:
    """Each saved argument with the arguments whose requiring grad saves it ("*": any of them)."""
    conditions: dict[str, Any] = {}
    for name in sorted(n for n in saved if not n.isdigit()):
        when: set[str] = set()
        everything = False
        for run in runs:
            by = {arg for arg, alone in run.alone.items() if name in alone}
            everything = everything or (bool(run.alone) and by == set(run.alone))
            when |= by
        conditions[name] = "*" if everything or not when else sorted(when)
    return conditions


def _derived_saves(name: str, db: dict[str, list[Any]],
                   observed: dict[str, list[tuple[Any, tuple[Any, ...], dict[str, Any]]]]) -> dict[str, Any] | None:
    """What a composite overload's graph saves, read from torch running it on OpInfo samples (else on
    the calls torch's own code made of it, else on samples made from its schema):
    `{"saves": {arg: "*" | [args whose requiring grad saves it]},
    "saves_outputs": [indices]}`; `{"varies": True}` when samples with the same tensors disagree
    (`cdist`'s `compute_mode`) or the kernel depends on the backend; `{"no_grad": True}` when it runs on
    integer tensors only, or its outputs are integer or bool tensors; None when no sample runs."""
    import torch

    base, _, overload = name.partition(".")
    if base in _BACKEND_DEPENDENT:
        return {"varies": True}
    function = getattr(getattr(torch.ops.aten, base), overload or "default")
    schema = function._schema
    runs: list[_Run] = []
    for info in db.get(base, []):
        try:
            samples = list(info.sample_inputs("cpu", torch.float64, requires_grad=True))[:6]
        except Exception:
            continue
        for sample in samples:
            bound = _bind_sample(schema, sample, info.op)
            if bound is None:
                continue
            run = _Run(lambda kept, info=info, sample=sample: info.op(
                *_detached_but((sample.input, *sample.args), kept), **_detached_but(sample.kwargs, kept)), bound)
            if run.run():
                runs.append(run)
    for call, args, kwargs in observed.get(base, []) if not runs else []:
        bound = _bind_call(schema, args, kwargs)
        if bound is not None:
            run = _Run(lambda kept, call=call, args=args, kwargs=kwargs: call(
                *_detached_but(args, kept), **_detached_but(kwargs, kept)), bound)
            if run.run():
                runs.append(run)
    if name in _CRASH_ON_MADE_SAMPLES and not runs:
        return None
    missing = {a.name for a in schema.arguments if "Tensor" in str(a.type)}.difference(
        *(run.given for run in runs if run.recorded))
    if not runs or missing:  # made samples, for the tensor arguments no sample of torch's gave
        made = 0
        for kwargs in [*_component_samples(schema), *_fallback_samples(schema)]:
            tensors = {k: v for k, v in kwargs.items() if _tensors_of(v)}
            run = _Run(lambda kept, kwargs=kwargs: function(**_detached_but(kwargs, kept)), tensors)
            if (not runs or run.given & missing) and run.run():
                runs.append(run)
                made += run.recorded
                if made == 3:
                    break
    if not runs:
        integral = _fallback_samples(schema, integral=True)
        return {"no_grad": True} if any(_Run(lambda kept, k=k: function(**k), {}).run() for k in integral[:12]) \
            else None
    recorded = [run for run in runs if run.recorded]  # runs where no input required grad say nothing
    if not recorded:  # no gradient flows: integer or bool outputs, else a graph that saves nothing
        return {"saves": {}, "saves_outputs": []} if any(run.floating for run in runs) else {"no_grad": True}
    runs = recorded
    for run in runs:
        for other in runs:
            common = run.given & other.given | {n for n in run.saved | other.saved if n.isdigit()}
            if run.saved & common != other.saved & common:
                return {"varies": True}
    saved = set().union(*(run.saved for run in runs))
    return {"saves": _conditions(runs, saved), "saves_outputs": sorted(int(n) for n in saved if n.isdigit())}


_QUANTIZED = "a quantization kernel: it takes the packed or quantized weights only torch's quantization flow makes"
_BACKWARD_HELPER = "a helper of a backward formula: autograd calls it while computing gradients, no forward pass does"
_SPARSE = "needs several sparse tensors whose layouts and sizes agree, which no sample provides"
# The differentiable composites no sample of torch's (or made from their schema) runs, and why: the
# analysis keeps their outputs in their inputs' graph and records no save of theirs.
WITHOUT_FACTS: dict[str, str] = {
    **dict.fromkeys(("_saturate_weight_to_fp16", "_wrapped_linear_prepack", "_wrapped_quantized_linear_prepacked",
                     "choose_qparams_optimized", "fake_quantize_per_channel_affine",
                     "fake_quantize_per_tensor_affine.tensor_qparams", "fbgemm_linear_fp16_weight",
                     "fbgemm_linear_fp16_weight_fp32_activation", "fbgemm_linear_int8_weight",
                     "fbgemm_linear_int8_weight_fp32_activation", "fbgemm_linear_quantize_weight",
                     "fbgemm_pack_gemm_matrix_fp16", "fbgemm_pack_quantized_matrix", "fbgemm_pack_quantized_matrix.KN",
                     "quantized_gru_cell", "quantized_lstm_cell", "quantized_rnn_relu_cell", "quantized_rnn_tanh_cell"),
                    _QUANTIZED),
    **dict.fromkeys(("_batch_norm_impl_index_backward", "_convolution_double_backward", "_embedding_bag_sparse_backward",
                     "_pack_padded_sequence_backward", "_thnn_differentiable_gru_cell_backward",
                     "_thnn_differentiable_lstm_cell_backward", "_thnn_fused_lstm_cell_backward",
                     "affine_grid_generator_backward", "conv_tbc_backward", "embedding_backward",
                     "embedding_sparse_backward", "index_select_backward", "trace_backward",
                     "value_selecting_reduction_backward"), _BACKWARD_HELPER),
    **dict.fromkeys(("_sparse_compressed_tensor_unsafe", "_sparse_mm.reduce", "sspaddmm"), _SPARSE),
    "_add_batch_dim": "vmap's own plumbing: it runs only inside torch.func transforms",
    "_batch_norm_impl_index": "batch_norm's C++ kernel choice; the analysis follows `batch_norm`, which users call",
    "_convolution_mode": "the C++ path of a convolution with padding='same'/'valid'; the analysis follows `conv2d`",
    "_pad_packed_sequence": "crashes the process on inputs that are not a real packed sequence's parts",
    "_reshape_from_tensor": "an ONNX export helper: a shape given as a tensor of the traced graph",
    "_rowwise_prune": "an embedding pruning utility of torch's model compression, run on weights without grad",
    "_test_check_tensor": "a test op of torch's own test suite",
    "nested_to_padded_tensor": "takes a nested tensor, a layout the analysis does not model",
    "nll_loss2d": "the C++ path of `nll_loss_nd` for 4-D inputs; samples need a class-index target of another shape",
    "pin_memory": "needs an accelerator: no sample runs on a CPU-only build",
}


def _needs_derived_saves(rec: dict[str, Any]) -> bool:
    return (bool(rec.get("composite")) and rec.get("differentiable", True) and rec["kind"] == "functional"
            and rec.get("returns_tensor", True))


def derive_composite_saves(ops: dict[str, Any], names: Any = None) -> None:
    """Add `derived` save facts to the differentiable composite functionals (those of `names` only)."""
    import torch

    db = _op_db()
    torch.manual_seed(0)
    wanted = [name for name, rec in ops.items() if _needs_derived_saves(rec) and (names is None or name in names)]
    observed = _observed_calls({name.split(".", 1)[0] for name in wanted})
    for name in wanted:
        torch.manual_seed(zlib.crc32(name.encode()))  # the same samples whichever ops are derived with it
        derived = _derived_saves(name, db, observed)
        if derived is not None:
            ops[name]["derived"] = derived
        elif name in WITHOUT_FACTS:
            ops[name]["no_facts"] = WITHOUT_FACTS[name]


def _aten_names(python: list[str], aten: list[str]) -> list[str | None]:
    """What each Python parameter is called in the ATen schema `aten`: its own name, `self` for
    `input`, else (a Python-only name: `tensor`, `split_size_or_sections`) the ATen argument at its
    position when no Python parameter takes that name; None when it has no ATen counterpart."""
    names: list[str | None] = []
    for position, name in enumerate(python):
        if name in aten:
            names.append(name)
        elif name == "input" and "self" in aten and "self" not in python:
            names.append("self")
        elif position < len(aten) and aten[position] not in python and aten[position] not in names:
            names.append(aten[position])
        else:
            names.append(None)
    return names


def _python_parameters(function: Any) -> list[str] | None:
    """The parameters a call may give by position or by keyword, in order; None when not inspectable."""
    import inspect

    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    names = []
    for parameter in parameters:
        if parameter.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            break
        names.append(parameter.name)
    return names


def python_signatures(ops: dict[str, Any]) -> dict[str, Any]:
    """For the Python functions in front of ATen ops (`torch.*`, `torch.nn.functional.*` and the methods
    `torch.Tensor` defines in Python), the parameters they take by position or keyword, the ATen name of
    each, and the ATen order: `torch.split(tensor, split_size_or_sections, dim)` → `split.Tensor(self, split_size,
    dim)`, `F.batch_norm(input, running_mean, running_var, weight, bias, ...)` → `batch_norm(input, weight,
    bias, running_mean, running_var, ...)`. The C++-bound ones take the ATen names (`input` for `self`)."""
    import inspect

    import torch
    import torch.nn.functional

    overloads: dict[str, list[list[str]]] = {}
    for name, rec in ops.items():
        if rec["kind"] == "functional":
            overloads.setdefault(name.split(".", 1)[0], []).append(rec["args"])
    found: dict[str, Any] = {}
    spaces = ((vars(torch), "torch"), (vars(torch.nn.functional), "torch.nn.functional"), (vars(torch.Tensor), "torch.Tensor"))
    for namespace, prefix in spaces:
        for name, function in namespace.items():
            if name.startswith("_") or name not in overloads or not inspect.isfunction(function):
                continue
            python = _python_parameters(function)
            if not python:
                continue
            aten = max(overloads[name], key=lambda args: sum(p in args for p in python))
            found[f"{prefix}.{name}"] = [python, _aten_names(python, aten), aten]
    return dict(sorted(found.items()))


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
    return {"torch_version": _version(), "ops": dict(sorted(ops.items())), "signatures": python_signatures(ops)}


def dumps(table: dict[str, Any]) -> str:
    """Serialize deterministically: one op per line, sorted keys, no spaces."""
    lines = ["{", f'"torch_version": {json.dumps(table["torch_version"])},', '"ops": {']
    items = sorted(table["ops"].items())
    for i, (name, rec) in enumerate(items):
        sep = "," if i < len(items) - 1 else ""
        lines.append(f"{json.dumps(name)}: {json.dumps(rec, sort_keys=True, separators=(',', ':'))}{sep}")
    lines += ["},", '"signatures": {']
    signatures = sorted(table["signatures"].items())
    for i, (name, parameters) in enumerate(signatures):
        sep = "," if i < len(signatures) - 1 else ""
        lines.append(f"{json.dumps(name)}: {json.dumps(parameters, separators=(',', ':'))}{sep}")
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
