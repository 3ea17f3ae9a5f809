"""The shipped ops.json must match what the installed torch's torchgen data gives, and must state
the facts the analyzer relies on."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gradguard.knowledge import ops

from helpers import ROOT

SHIPPED = ROOT / "server" / "gradguard" / "knowledge" / "ops.json"


# The table regenerated in a process of its own: running torch's OpInfo samples leaves that
# process's state changed (its test modules loaded, its samples' objects), which a test run after
# it in the same pytest worker must not inherit (the LSP memory test counted objects it left).
_REGENERATE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import generate_op_table as gen
shipped = json.loads(sys.stdin.read())
fresh = gen.build_table(derive=False)
ran = ("derived", "no_facts")
derived = sorted(name for name, rec in shipped["ops"].items() if any(f in rec for f in ran))
sample = set(derived[::12]) | {"cosine_similarity", "matmul", "lstm.input", "greater.Scalar", "pin_memory"}
gen.derive_composite_saves(fresh["ops"], names=sample)
json.dump({"table": fresh, "sample": sorted(sample)}, sys.stdout)
"""


def test_shipped_table_matches_installed_torch() -> None:
    """Every op's torchgen facts regenerated; the saves read from torch running composites, for a
    sample of them (all of them take ~45 s: `make knowledge`)."""
    pytest.importorskip("torchgen")
    text = SHIPPED.read_text(encoding="utf-8")
    ran = subprocess.run([sys.executable, "-c", _REGENERATE, str(ROOT / "scripts")], input=text,
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    regenerated = json.loads(ran.stdout)
    fresh, sample, shipped = regenerated["table"], regenerated["sample"], json.loads(text)
    hint = "ops.json is stale: run `make knowledge` and commit the result"
    assert fresh["torch_version"] == shipped["torch_version"], hint
    ran_facts = ("derived", "no_facts")
    changed = sorted(k for k in fresh["ops"].keys() | shipped["ops"].keys()
                     if {f: v for f, v in fresh["ops"].get(k, {}).items() if f not in ran_facts}
                     != {f: v for f, v in shipped["ops"].get(k, {}).items() if f not in ran_facts})
    assert not changed, f"{hint}; {len(changed)} ops differ, e.g. {changed[:10]}"
    assert fresh["signatures"] == shipped["signatures"], hint
    assert {n: fresh["ops"][n] for n in sample} == {n: shipped["ops"][n] for n in sample}, hint


def _op(name: str) -> ops.OpFacts:
    facts = ops.op(name)
    assert facts is not None, name
    return facts


def test_python_signatures_bind_keywords_by_position() -> None:
    """`torch.split(tensor=v, split_size_or_sections=2)` binds as `split.Tensor(v, 2)`, `F.batch_norm` in
    ATen's order; C++-bound functions (their keywords are the ATen names) and calls giving a Python-only
    parameter (`_stacklevel`) are left alone."""
    assert ops.by_position("torch.split", [], {"tensor": "v", "split_size_or_sections": 2, "dim": 1}) == (["v", 2, 1], {})
    assert ops.by_position("torch.split", ["v"], {"dim": 1}) == (["v"], {"dim": 1})  # a gap: Python keeps it a keyword
    assert ops.by_position("torch.Tensor.split", ["v"], {"split_size": 2}) == (["v", 2], {})
    assert ops.by_position("torch.sigmoid", [], {"input": "v"}) == ([], {"input": "v"})
    # Python's order is not ATen's: `F.batch_norm(input, running_mean, running_var, weight, bias, ...)`
    assert ops.by_position("torch.nn.functional.batch_norm", ["x", "m", "v"], {"weight": "w", "bias": "b"}) == (
        ["x", "w", "b", "m", "v"], {})
    assert ops.by_position("torch.nn.functional.softmax", ["x", 1, 3], {}) == (["x", 1, 3], {})  # `_stacklevel`


def test_table_size() -> None:
    assert SHIPPED.stat().st_size < 1_000_000
    assert ops.torch_version().startswith("2.")


def test_saves_result() -> None:
    assert _op("sigmoid").saves_result and not _op("sigmoid").saves
    relu_ = _op("relu_")
    assert relu_.kind == "inplace" and relu_.mutates == ("self",)
    assert relu_.saves_result and not relu_.saves_clone


def test_inplace_clones() -> None:
    silu_ = _op("silu_")
    assert silu_.saves_clone and not silu_.saves_result
    assert silu_.saved_inputs({"self": True}) == frozenset()  # the clone is immune to mutation
    mul_ = _op("mul_.Tensor")
    assert mul_.saves_clone and mul_.saves == {"self": frozenset({"other"}), "other": frozenset({"self"})}
    assert mul_.saved_inputs({"self": True, "other": True}) == {"other"}


def test_conditional_saves() -> None:
    mul = _op("mul.Tensor")
    assert mul.saves == {"self": frozenset({"other"}), "other": frozenset({"self"})}
    assert mul.saved_inputs({"self": True}) == {"other"}
    assert mul.saved_inputs({"other": True}) == {"self"}
    assert mul.saved_inputs({}) == frozenset()
    addmm = _op("addmm")
    assert addmm.saves == {"mat1": frozenset({"mat2"}), "mat2": frozenset({"mat1"})}
    assert addmm.saved_inputs({"mat1": True, "self": True}) == {"mat2"}


def test_always_saved() -> None:
    conv = _op("convolution")
    assert conv.saves == {"input": None, "weight": None}
    assert conv.saved_inputs({"input": True}) == {"input", "weight"}


def test_metadata_is_not_saved() -> None:
    assert not _op("sum").saves and not _op("sum").saves_result
    assert not _op("add_.Tensor").saves and not _op("add_.Tensor").saves_result


def test_embedding_saves_indices_only() -> None:
    emb = _op("embedding")
    assert set(emb.saves) == {"indices"}
    assert emb.grad_inputs == {"weight"}
    assert emb.saved_inputs({"weight": True}) == {"indices"}


def test_composite_ops_decompose() -> None:
    for name in ("linear", "matmul", "max_pool2d", "chunk", "softmax.int"):
        facts = _op(name)
        assert facts.composite and not facts.saves and not facts.saves_result, name
        assert facts.saved_inputs({a: True for a in facts.tensor_args}) == frozenset()


def test_composite_overloads_record_their_siblings_kernel() -> None:
    torch = pytest.importorskip("torch")
    x = torch.randn(5, requires_grad=True)
    recorded = {"std": x.std(), "std.dim": x.std(0), "var.dim": x.var(0, unbiased=False),
                "std_mean": torch.std_mean(x)[0], "where.ScalarOther": torch.where(x > 0, x, 0.0)}
    for name, result in recorded.items():
        kernel = ops.kernel_of(_op(name))
        assert kernel is not None and kernel.name.startswith(name.split(".")[0] + "."), name
        assert type(result.grad_fn).__name__.lower().startswith(name.split(".")[0].replace("_", "")), name
    assert ops.kernel_of(_op("std.dim")).saves_result and ops.kernel_of(_op("std.dim")).saves == {"self": None}
    assert ops.kernel_of(_op("max.other")) is None  # records maximum's kernel, not max's
    assert ops.kernel_of(_op("std.correction")) is None  # not composite: its own kernel


def test_views() -> None:
    for name in ("view", "transpose.int", "select.int", "slice.Tensor", "detach", "alias", "contiguous", "reshape"):
        assert _op(name).view_of == "self", name
    for name in ("unbind.int", "split.Tensor", "split_with_sizes", "split.sizes", "chunk"):
        assert _op(name).multi_output_view and _op(name).view_of == "self", name
    for name in ("tensor_split.sections", "tensor_split.indices", "hsplit.int", "vsplit.int", "dsplit.int"):
        assert _op(name).view_of == "self" and not _op(name).multi_output_view, name
    assert _op("unsafe_split.Tensor").view_of is None


def test_out_variants() -> None:
    mul_out = _op("mul.out")
    assert mul_out.kind == "out" and mul_out.mutates == ("out",)
    assert not mul_out.saves and not mul_out.differentiable


def test_overloads() -> None:
    names = {f.name for f in ops.overloads("mul")}
    assert {"mul.Tensor", "mul.Scalar"} <= names
    assert not any(n.startswith("mul_") or n.endswith("out") for n in names)
    assert {f.name for f in ops.overloads("relu_")} == {"relu_"}
    assert ops.op("no_such_op") is None and ops.overloads("no_such_op") == ()


def test_non_differentiable() -> None:
    assert not _op("argmax").differentiable
    assert _op("argmax").saved_inputs({"self": True}) == frozenset()


def test_composites_of_the_namespaces_name_the_op_torch_traces_them_into() -> None:
    assert _op("special_expit").traced_kernel == ("sigmoid", "self")
    assert _op("linalg_norm").traced_kernel == ("linalg_vector_norm", "self")
    assert _op("linalg_eigh").traced_kernel == ("_linalg_eigh", "A")
    assert _op("fft_rfft").traced_kernel == ("_fft_r2c", "self")
    assert _op("fft_fft").traced_kernel is None  # `_fft_r2c` of a real tensor, `_fft_c2c` of a complex one


def test_composites_saves_are_read_from_torch_running_them() -> None:
    cos = ops.derived_of(_op("cosine_similarity"))  # each input is saved when it requires grad itself
    assert cos is not None and not cos.composite and cos.saved_inputs({"x1": True}) == {"x1"}
    assert cos.saved_inputs({"x1": True, "x2": True}) == {"x1", "x2"}
    assert ops.derived_of(_op("outer")).saved_inputs({"self": True}) == {"vec2"}  # what self's gradient needs
    assert ops.derived_of(_op("matmul")).saved_inputs({"other": True}) == {"self"}
    for name in ("einsum", "scaled_dot_product_attention"):  # saves depend on the equation / the kernel
        facts = _op(name)
        derived = ops.derived_of(facts)
        assert facts.saves_vary and derived.saves.keys() == facts.tensor_args and not derived.saves_certain, name
    assert not ops.derived_of(_op("einsum")).saves_result  # einsum's output is never what it saves
    assert ops.derived_of(_op("scaled_dot_product_attention")).saves_result  # flash kernels save theirs
    torch = pytest.importorskip("torch")
    a, b = torch.randn(3, 4, requires_grad=True), torch.randn(3, 4)
    x1 = a * 1
    sim = torch.nn.functional.cosine_similarity(x1, b)
    b.add_(1)  # not saved: it does not require grad
    x1.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        sim.sum().backward()
    x, w = torch.randn(4, 3), torch.randn(3, 2, requires_grad=True)
    y = torch.matmul(x, w)
    with torch.no_grad():
        w.mul_(0.5)  # matmul saves `w` only for `x`'s gradient, which no one asks for
    y.sum().backward()


def surface_decomposes(base: str) -> bool:
    from gradguard.knowledge import surface

    return base in surface.DECOMPOSITIONS


def test_few_differentiable_composites_stay_without_save_facts() -> None:
    """At most 50 differentiable composites that return tensors stay without save facts (neither a
    decomposition, a traced or sibling kernel, nor saves read from torch running them), each with its
    reason in the table (529 before the saves were read from torch, 461 after, 214 before samples of
    torch's own calls, made samples and sparse parts)."""
    shipped = json.loads(SHIPPED.read_text(encoding="utf-8"))["ops"]
    without = {name for name, rec in shipped.items()
               if rec.get("composite") and rec.get("differentiable", True) and rec["kind"] == "functional"
               and rec.get("returns_tensor", True) and not surface_decomposes(name.split(".")[0])
               and _op(name).traced_kernel is None and ops.kernel_of(_op(name)) is None
               and ops.derived_of(_op(name)) is None and _op(name).differentiable}
    assert len(without) <= 50, len(without)
    assert {name for name, rec in shipped.items() if "no_facts" in rec} == without
    assert not {"einsum", "cosine_similarity", "cdist", "outer", "kron", "bilinear", "instance_norm",
                "pairwise_distance", "scaled_dot_product_attention", "chain_matmul", "lstm.input",
                "upsample_bilinear2d.vec", "clip", "divide.Tensor_mode", "stft"} & without


@pytest.mark.parametrize("name", ["softmin", "logsigmoid", "softsign", "normalize"])
def test_python_functionals_save_what_the_op_they_stand_for_saves(name: str) -> None:
    """`torch.nn.functional` functions written in Python (no ATen op of their name) are analysed as
    the op of `surface.DECOMPOSITIONS`: torch raises at backward when their input, or their output,
    is changed in place after the call exactly when that op's facts say it is saved."""
    from gradguard.knowledge import surface

    torch = pytest.importorskip("torch")
    facts = _op(surface.DECOMPOSITIONS[name].aten_op)
    facts = (ops.kernel_of(facts) or ops.derived_of(facts)) if facts.composite else facts
    function = getattr(torch.nn.functional, name)
    for changed, saved in (("input", bool(facts.saved_inputs({"self": True}))), ("output", facts.saves_result)):
        x = torch.randn(3, 4, requires_grad=True)
        given = x * 1
        out = function(given, dim=-1) if name == "softmin" else function(given)
        (given if changed == "input" else out).add_(1)
        if saved:
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                out.sum().backward()
        else:
            out.sum().backward()



def test_autocast_tables_follow_cpu_autocast() -> None:
    """Under CPU autocast (bf16), every op of `AUTOCAST_LOWERS` gives bf16 from fp32 inputs, and
    every op of `AUTOCAST_KEEPS_PRECISION` gives bf16 from bf16 inputs (with an fp32 tensor beside
    them it would give fp32, which the analysis never assumes)."""
    torch = pytest.importorskip("torch")
    from gradguard.knowledge import surface

    F = torch.nn.functional
    x, w, b = torch.randn(2, 4), torch.randn(4, 4), torch.randn(4)
    image, kernel = torch.randn(1, 4, 5, 5, 5), torch.randn(4, 4, 1, 1, 1)
    lowered = {
        "linear": lambda: F.linear(x, w), "addmm": lambda: torch.addmm(b, x, w), "mm": lambda: x.mm(w),
        "bmm": lambda: w[None].bmm(w[None]), "baddbmm": lambda: torch.baddbmm(w[None], w[None], w[None]),
        "matmul": lambda: x @ w, "conv1d": lambda: F.conv1d(image[..., 0, 0], kernel[..., 0, 0]),
        "conv2d": lambda: F.conv2d(image[..., 0], kernel[..., 0]), "conv3d": lambda: F.conv3d(image, kernel),
        "conv_transpose1d": lambda: F.conv_transpose1d(image[..., 0, 0], kernel[..., 0, 0]),
        "conv_transpose2d": lambda: F.conv_transpose2d(image[..., 0], kernel[..., 0]),
        "conv_transpose3d": lambda: F.conv_transpose3d(image, kernel),
    }
    assert lowered.keys() == surface.AUTOCAST_LOWERS <= surface.AUTOCAST_LOWER_PRECISION
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert {name: make().dtype for name, make in lowered.items()} == dict.fromkeys(lowered, torch.bfloat16)
        a = F.linear(x, w)
        runs = {
            "relu": a.relu, "gelu": lambda: F.gelu(a), "silu": lambda: F.silu(a),
            "sigmoid": a.sigmoid, "tanh": a.tanh, "hardtanh": lambda: F.hardtanh(a), "elu": lambda: F.elu(a),
            "leaky_relu": lambda: F.leaky_relu(a), "neg": a.neg, "abs": a.abs, "clamp": lambda: a.clamp(0, 1),
            "dropout": lambda: F.dropout(a, 0.1), "add": lambda: a + a, "sub": lambda: a - 1, "mul": lambda: a * a,
            "div": lambda: a / 2, "view": lambda: a.view(-1), "reshape": lambda: a.reshape(-1),
            "permute": lambda: a.permute(1, 0), "transpose": lambda: a.transpose(0, 1), "t": a.t,
            "flatten": a.flatten, "unsqueeze": lambda: a.unsqueeze(0), "squeeze": a.squeeze,
            "select": lambda: a[0], "slice": lambda: a[:, 1:], "expand": lambda: a[:1].expand(2, 4),
            "contiguous": a.contiguous, "clone": a.clone,
        }
        assert runs.keys() == surface.AUTOCAST_KEEPS_PRECISION
        assert {name: run().dtype for name, run in runs.items()} == dict.fromkeys(runs, torch.bfloat16)


def test_traced_kernels_do_not_depend_on_the_random_state() -> None:
    """The sample a composite is traced on is the same at every run: `linalg_cholesky` traces into
    `linalg_cholesky_ex` only on a positive definite sample, which an unseeded draw gave one run in 80."""
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import generate_op_table as gen
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    table = {"linalg_cholesky": {"args": ["self", "upper"], "composite": True},
             "linalg_cholesky_ex": {"args": ["self", "upper", "check_errors"]}}
    traced = []
    for seed in (0, 2946):  # torch.randn(3, 3) after seed 2946 is positive definite
        torch.manual_seed(seed)
        traced.append(gen._traced_kernel("linalg_cholesky", table))
    assert traced[0] == traced[1]
