"""Checks ops.json against the runtime: run an ATen overload, bump the version of one of its
tensor inputs or outputs, run backward, and see whether autograd raises
"modified by an inplace operation" exactly when the table says that tensor was saved."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

torch = pytest.importorskip("torch")

from gradguard.knowledge import ops  # noqa: E402

A = torch.ops.aten
MODIFIED = "modified by an inplace operation"
MULTI_VIEW = "returns multiple views"


def rnd(*shape: int) -> Callable[[], torch.Tensor]:
    return lambda: torch.randn(*shape, dtype=torch.double)


def pos(*shape: int) -> Callable[[], torch.Tensor]:
    return lambda: torch.rand(*shape, dtype=torch.double) + 0.5


def const(*values: object, dtype: torch.dtype | None = None) -> Callable[[], torch.Tensor]:
    return lambda: torch.tensor(values, dtype=dtype)


@dataclass
class Case:
    key: str  # overload key in ops.json, e.g. "mul.Tensor"
    tensors: dict[str, Callable[[], torch.Tensor]]
    extra: dict[str, object] = field(default_factory=dict)
    # which inputs require grad; default: each differentiable float input alone, then all
    rgs: list[tuple[str, ...]] | None = None


def _overload(key: str):
    base, _, overload = key.partition(".")
    return getattr(getattr(A, base), overload or "default")


M23, M34 = rnd(2, 3), rnd(3, 4)
CASES = [
    # conditional saves: each operand only if the other one requires grad
    Case("mul.Tensor", {"self": rnd(3), "other": rnd(3)}),
    Case("div.Tensor", {"self": rnd(3), "other": pos(3)}),
    Case("mm", {"self": M23, "mat2": M34}),
    Case("bmm", {"self": rnd(2, 2, 3), "mat2": rnd(2, 3, 4)}),
    Case("addmm", {"self": rnd(2, 4), "mat1": M23, "mat2": M34}),
    Case("mv", {"self": M23, "vec": rnd(3)}),
    Case("dot", {"self": rnd(3), "tensor": rnd(3)}),
    Case("addcmul", {"self": rnd(3), "tensor1": rnd(3), "tensor2": rnd(3)}),
    Case("lerp.Tensor", {"self": rnd(3), "end": rnd(3), "weight": rnd(3)}),
    Case("atan2", {"self": rnd(3), "other": rnd(3)}),
    Case("pow.Tensor_Tensor", {"self": pos(3), "exponent": rnd(3)}),
    Case(
        "_trilinear",
        {"i1": M23, "i2": rnd(5, 3, 4), "i3": rnd(2, 4)},
        {"expand1": [1, 3], "expand2": [0], "expand3": [1, 2], "sumdim": [2, 3]},
    ),
    # unary: save the input or the result
    Case("sigmoid", {"self": rnd(3)}),
    Case("tanh", {"self": rnd(3)}),
    Case("exp", {"self": rnd(3)}),
    Case("sqrt", {"self": pos(3)}),
    Case("relu", {"self": rnd(3)}),
    Case("log", {"self": pos(3)}),
    Case("sin", {"self": rnd(3)}),
    Case("abs", {"self": rnd(3)}),
    Case("gelu", {"self": rnd(3)}),
    Case("silu", {"self": rnd(3)}),
    Case("leaky_relu", {"self": rnd(3)}),
    Case("elu", {"self": rnd(3)}),
    Case("hardtanh", {"self": rnd(3)}),
    Case("clamp", {"self": rnd(3)}, {"min": -0.5, "max": 0.5}),
    Case("pow.Tensor_Scalar", {"self": rnd(3)}, {"exponent": 3}),
    Case("_softmax", {"self": M23}, {"dim": 1, "half_to_float": False}),
    Case("_log_softmax", {"self": M23}, {"dim": 1, "half_to_float": False}),
    # reductions: sizes are metadata
    Case("sum", {"self": rnd(3)}),
    Case("mean", {"self": rnd(3)}),
    Case("cumsum", {"self": rnd(3)}, {"dim": 0}),
    Case("prod", {"self": rnd(3)}),
    Case("linalg_vector_norm", {"self": rnd(3)}),
    Case("max.dim", {"self": M23}, {"dim": 1}),
    Case("maximum", {"self": rnd(3), "other": rnd(3)}),
    # nn kernels
    Case(
        "convolution",
        {"input": rnd(1, 2, 5, 5), "weight": rnd(3, 2, 3, 3), "bias": rnd(3)},
        {"stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "transposed": False,
         "output_padding": [0, 0], "groups": 1},
        rgs=[("weight",), ("input",), ("bias",), ("input", "weight", "bias")],
    ),
    Case("embedding", {"weight": rnd(5, 2), "indices": const(1, 3)}),
    Case("index_select", {"self": rnd(4, 2), "index": const(0, 2)}, {"dim": 0}),
    Case("gather", {"self": M23, "index": const([0], [2])}, {"dim": 1}),
    Case("where.self", {"condition": const(True, False, True), "self": rnd(3), "other": rnd(3)}),
    Case("mse_loss", {"self": rnd(3), "target": rnd(3)}),
    Case("native_layer_norm", {"input": M23, "weight": rnd(3), "bias": rnd(3)},
         {"normalized_shape": [3], "eps": 1e-5}),
    Case(
        "native_batch_norm",
        {"input": rnd(4, 3), "weight": rnd(3), "bias": rnd(3), "running_mean": rnd(3),
         "running_var": pos(3)},
        {"training": True, "momentum": 0.1, "eps": 1e-5},
        rgs=[("input",), ("weight",), ("input", "weight", "bias")],
    ),
    Case("max_pool2d_with_indices", {"self": rnd(1, 1, 4, 4)}, {"kernel_size": [2, 2]}),
    # in-place variants: self is the output; it is saved as a clone or as the result
    Case("relu_", {"self": rnd(3)}),
    Case("sigmoid_", {"self": rnd(3)}),
    Case("tanh_", {"self": rnd(3)}),
    Case("exp_", {"self": rnd(3)}),
    Case("sqrt_", {"self": pos(3)}),
    Case("silu_", {"self": rnd(3)}),
    Case("gelu_", {"self": rnd(3)}),
    Case("hardtanh_", {"self": rnd(3)}),
    Case("leaky_relu_", {"self": rnd(3)}),
    Case("elu_", {"self": rnd(3)}),
    Case("abs_", {"self": rnd(3)}),
    Case("clamp_", {"self": rnd(3)}, {"min": -0.5, "max": 0.5}),
    Case("threshold_", {"self": rnd(3)}, {"threshold": 0.0, "value": 0.0}),
    Case("pow_.Scalar", {"self": rnd(3)}, {"exponent": 2}),
    Case("mul_.Tensor", {"self": rnd(3), "other": rnd(3)}),
    Case("div_.Tensor", {"self": rnd(3), "other": pos(3)}),
    Case("mul_.Scalar", {"self": rnd(3)}, {"other": 2.0}),
    Case("add_.Tensor", {"self": rnd(3), "other": rnd(3)}),
    Case("addcmul_", {"self": rnd(3), "tensor1": rnd(3), "tensor2": rnd(3)}),
    Case("addmm_", {"self": rnd(2, 4), "mat1": M23, "mat2": M34}),
    Case("masked_fill_.Scalar", {"self": rnd(3), "mask": const(True, False, True)}, {"value": 0.0}),
    Case("copy_", {"self": rnd(3), "src": rnd(3)}, rgs=[("src",), ("self", "src")]),
    # views save nothing
    Case("view", {"self": M23}, {"size": [3, 2]}),
    Case("transpose.int", {"self": M23}, {"dim0": 0, "dim1": 1}),
    Case("select.int", {"self": M23}, {"dim": 0, "index": 1}),
    Case("slice.Tensor", {"self": M23}, {"dim": 1, "start": 0, "end": 2}),
    Case("t", {"self": M23}),
    Case("permute", {"self": M23}, {"dims": [1, 0]}),
    Case("expand", {"self": rnd(3)}, {"size": [2, 3]}),
    Case("unsqueeze", {"self": rnd(3)}, {"dim": 0}),
    Case("diagonal", {"self": rnd(3, 3)}),
    Case("alias", {"self": rnd(3)}),
]
# Multi-output views (unbind, split, ...) are checked by test_multi_output_view_flag: bumping the
# version of their base or of one output makes the outputs unusable in backward at all.


def _default_rgs(case: Case) -> list[tuple[str, ...]]:
    facts = ops.op(case.key)
    assert facts is not None, case.key
    floats = [n for n, make in case.tensors.items() if make().is_floating_point() and n in facts.grad_inputs]
    singles = [(n,) for n in floats]
    return singles + ([tuple(floats)] if len(floats) > 1 else [])


def _n_outputs(case: Case) -> int:
    returns = _overload(case.key)._schema.returns
    return 1 if str(returns[0].type).endswith("[]") else len(returns)


def _params():
    for case in CASES:
        facts = ops.op(case.key)
        assert facts is not None, case.key
        for rg in case.rgs or _default_rgs(case):
            targets = [f"in:{n}" for n in case.tensors if not (facts.kind == "inplace" and n == "self")]
            targets += [f"out:{i}" for i in range(_n_outputs(case))]
            for target in targets:
                yield pytest.param(case, rg, target, id=f"{case.key}-rg={'+'.join(rg)}-{target}")


def _run(case: Case, rg: tuple[str, ...], target: str) -> bool:
    """Run the case; True if backward raised 'modified by an inplace operation'."""
    torch.manual_seed(0)
    inplace = ops.op(case.key).kind == "inplace"
    tensors = {}
    for name, make in case.tensors.items():
        t = make()
        if name in rg:
            t.requires_grad_()
            if inplace and name == "self":
                t = t.clone()  # in-place needs a non-leaf
        tensors[name] = t
    out = _overload(case.key)(**tensors, **case.extra)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    where, _, which = target.partition(":")
    victim = tensors[which] if where == "in" else outs[int(which)]
    with torch.no_grad():
        if torch._debug_has_internal_overlap(victim) == 1:  # expand: cannot be written to
            torch.autograd.graph.increment_version(victim)
        else:
            victim.copy_(victim.clone())  # same values, new version
    try:
        outs[0].sum().backward()
    except RuntimeError as e:
        if MODIFIED not in str(e):
            raise
        return True
    return False


@pytest.mark.parametrize(("case", "rg", "target"), list(_params()))
def test_table_predicts_inplace_error(case: Case, rg: tuple[str, ...], target: str) -> None:
    facts = ops.op(case.key)
    where, _, which = target.partition(":")
    if where == "in":
        predicted = which in facts.saved_inputs({n: n in rg for n in case.tensors})
    else:
        predicted = int(which) in facts.saves_outputs
    raised = _run(case, rg, target)
    assert raised == predicted, (
        f"{case.key} with requires_grad={rg}: mutating {target} "
        f"{'raised' if raised else 'did not raise'}, table predicted {'raise' if predicted else 'none'}"
    )


def test_enough_ops_covered() -> None:
    assert len({c.key for c in CASES}) >= 40


MULTI_OUTPUT = [
    ("unbind.int", {}),
    ("split.Tensor", {"split_size": 2}),
    ("split_with_sizes", {"split_sizes": [2, 2]}),
    ("split.sizes", {"split_size": [2, 2]}),
    ("chunk", {"chunks": 2}),
    ("tensor_split.sections", {"sections": 2}),
    ("tensor_split.indices", {"indices": [1]}),
    ("hsplit.int", {"sections": 2}),
    ("vsplit.int", {"sections": 2}),
    ("dsplit.int", {"sections": 2}),
]


def _split(key: str, extra: dict) -> tuple[torch.Tensor, list[torch.Tensor]]:
    x = torch.randn(4, 4, 4, dtype=torch.double, requires_grad=True).clone()
    return x, list(_overload(key)(x, **extra))


@pytest.mark.parametrize(("key", "extra"), MULTI_OUTPUT, ids=[k for k, _ in MULTI_OUTPUT])
def test_multi_output_view_flag(key: str, extra: dict) -> None:
    """Multi-output views: in-place on an output raises at once in grad mode, and after a
    no_grad in-place on their base, using an output in autograd raises."""
    facts = ops.op(key)
    assert facts is not None and facts.view_of == "self"
    _, outs = _split(key, extra)
    with pytest.raises(RuntimeError, match=MULTI_VIEW) if facts.multi_output_view else _no_error():
        outs[0].mul_(2)
    base, outs = _split(key, extra)
    with torch.no_grad():
        base.add_(1)
    with pytest.raises(RuntimeError, match=MULTI_VIEW) if facts.multi_output_view else _no_error():
        outs[0].sum().backward()


@contextlib.contextmanager
def _no_error():
    yield
