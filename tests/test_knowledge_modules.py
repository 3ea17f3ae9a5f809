"""Checks the module table (`gradguard.knowledge.modules`) against torch itself.

Each table entry gets a small instance of its module (train mode, CPU). The test then does what a user
might do, mutating a tensor in place under `torch.no_grad()` after the call, and checks that
`backward()` raises "modified by an inplace operation" exactly when the table says the tensor is
saved for backward.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Callable

import pytest
import torch
from torch import nn

from gradguard.knowledge.modules import (
    MODULES,
    PARAMETRIZATIONS,
    PARAMETRIZATIONS_SAVING,
    RECURRENT_NETWORKS,
    InplaceSaves,
    Saves,
    recurrent_parameters,
)

INPLACE_ERROR = "modified by an inplace operation"
MIN_CHECKED_ENTRIES = 30


@dataclass(frozen=True)
class Case:
    """How to build one module of the table and call it."""

    args: tuple = ()
    """positional constructor arguments (before any `inplace=`)"""
    shape: tuple[int, ...] = (2, 3, 4)
    """shape of the input x"""
    extra: Callable[[], tuple] = tuple
    """further call arguments after x: a loss target, Bilinear's second input"""
    index_bound: int | None = None
    """x holds integer indices below this bound (Embedding), so it can never require grad"""
    kwargs: tuple[tuple[str, object], ...] = ()
    """keyword constructor arguments"""


def _target(*shape: int) -> Callable[[], tuple]:
    return lambda: (torch.randn(*shape),)


CASES: dict[str, Case] = {
    "Conv1d": Case((2, 3, 3), (2, 2, 5)),
    "Conv2d": Case((2, 3, 3), (1, 2, 5, 5)),
    "Conv3d": Case((2, 3, 3), (1, 2, 4, 4, 4)),
    "ConvTranspose1d": Case((2, 3, 2), (2, 2, 4)),
    "ConvTranspose2d": Case((2, 3, 2), (1, 2, 3, 3)),
    "ConvTranspose3d": Case((2, 3, 2), (1, 2, 2, 2, 2)),
    "Linear": Case((4, 3), (2, 4)),
    "RNNCell": Case((4, 3), (2, 4)),
    "GRUCell": Case((4, 3), (2, 4)),
    "LSTMCell": Case((4, 3), (2, 4)),
    "MultiheadAttention": Case((4, 2), (3, 2, 4), extra=lambda: (torch.randn(3, 2, 4), torch.randn(3, 2, 4))),
    # The second input does not require grad, so only the weight decides whether x is saved.
    "Bilinear": Case((4, 5, 3), (2, 4), extra=_target(2, 5)),
    "BatchNorm1d": Case((3,), (4, 3)),
    "BatchNorm2d": Case((3,), (2, 3, 2, 2)),
    "BatchNorm3d": Case((3,), (2, 3, 2, 2, 2)),
    "SyncBatchNorm": Case((3,), (2, 3, 2, 2)),
    "InstanceNorm1d": Case((3,), (2, 3, 5)),
    "InstanceNorm2d": Case((3,), (2, 3, 3, 3)),
    "InstanceNorm3d": Case((3,), (2, 3, 2, 2, 2)),
    "LayerNorm": Case((4,)),
    "GroupNorm": Case((2, 4), (2, 4, 3)),
    "RMSNorm": Case((4,)),
    "ReLU": Case(),
    "LeakyReLU": Case(),
    "ELU": Case(),
    "SELU": Case(),
    "CELU": Case(),
    "RReLU": Case(),
    "ReLU6": Case(),
    "Hardtanh": Case(),
    "SiLU": Case(),
    "Mish": Case(),
    "Hardswish": Case(),
    "Hardsigmoid": Case(),
    "Threshold": Case((0.1, 20.0)),
    "GELU": Case(),
    "Softplus": Case(),
    "Hardshrink": Case(),
    "Softshrink": Case(),
    "GLU": Case(),
    "LogSigmoid": Case(),
    "Softsign": Case(),
    "PReLU": Case(),
    "Sigmoid": Case(),
    "Tanh": Case(),
    "Softmax": Case((-1,)),
    "LogSoftmax": Case((-1,)),
    "Softmin": Case((-1,)),
    "Tanhshrink": Case(),
    "Dropout": Case(),
    "Dropout1d": Case((), (2, 3, 4)),
    "Dropout2d": Case((), (2, 3, 2, 2)),
    "Dropout3d": Case((), (2, 3, 2, 2, 2)),
    "AlphaDropout": Case(),
    "FeatureAlphaDropout": Case((), (2, 3, 2, 2)),
    "MaxPool1d": Case((2,), (2, 3, 4)),
    "MaxPool2d": Case((2,), (1, 2, 4, 4)),
    "MaxPool3d": Case((2,), (1, 2, 4, 4, 4)),
    "AdaptiveMaxPool1d": Case((2,), (2, 3, 4)),
    "AdaptiveMaxPool2d": Case((2,), (1, 2, 4, 4)),
    "AdaptiveMaxPool3d": Case((2,), (1, 2, 4, 4, 4)),
    "AvgPool1d": Case((2,), (2, 3, 4)),
    "AvgPool2d": Case((2,), (1, 2, 4, 4)),
    "AvgPool3d": Case((2,), (1, 2, 4, 4, 4)),
    "Embedding": Case((10, 3), (2, 4), index_bound=10),
    "EmbeddingBag": Case((10, 3), (2, 4), index_bound=10),
    "Identity": Case(),
    "Flatten": Case(),
    "Unflatten": Case((1, (2, 2)), (2, 4, 3)),
    "Upsample": Case(kwargs=(("scale_factor", 2),), shape=(1, 2, 3, 3)),
    "UpsamplingNearest2d": Case(kwargs=(("scale_factor", 2),), shape=(1, 2, 3, 3)),
    "UpsamplingBilinear2d": Case(kwargs=(("scale_factor", 2),), shape=(1, 2, 3, 3)),
    "PixelShuffle": Case((2,), (1, 4, 2, 2)),
    "PixelUnshuffle": Case((2,), (1, 1, 4, 4)),
    "CrossEntropyLoss": Case((), (4, 5), extra=lambda: (torch.randint(0, 5, (4,)),)),
    **{f"{kind}Pad{n}d": Case((1,), (1, 2, *(3,) * n)) for kind in ("Zero", "Reflection", "Replication", "Circular")
       for n in (1, 2, 3)},
    **{f"ConstantPad{n}d": Case((1, 0.5), (1, 2, *(3,) * n)) for n in (1, 2, 3)},
    "LSTM": Case((4, 3), (3, 2, 4)),
    "GRU": Case((4, 3), (3, 2, 4)),
    "RNN": Case((4, 3), (3, 2, 4)),
    "MSELoss": Case((), (2, 3), extra=_target(2, 3)),
    "L1Loss": Case((), (2, 3), extra=_target(2, 3)),
}

NAMES = sorted(CASES)
WITH_PARAMETERS = [n for n in NAMES if MODULES[n].parameters]
WITH_INPLACE = [n for n in NAMES if MODULES[n].inplace is not InplaceSaves.NO_INPLACE]


# ---------------------------------------------------------------------------------------------- helpers


def build(name: str, *, train: bool = True, **kwargs) -> nn.Module:
    case = CASES[name]
    m = getattr(nn, name)(*case.args, **dict(case.kwargs), **kwargs)
    return m.train(train)


def make_input(name: str, *, requires_grad: bool = True) -> torch.Tensor:
    """A fresh input. With grad it is a non-leaf that nobody saved (a mul by a Python scalar saves
    nothing), so only the module under test can make its mutation fatal."""
    case = CASES[name]
    if case.index_bound is not None:
        return torch.randint(0, case.index_bound, case.shape)
    if requires_grad:
        return torch.randn(case.shape, requires_grad=True) * 1.0
    return torch.randn(case.shape)


def call(name: str, m: nn.Module, x: torch.Tensor):
    return m(x, *CASES[name].extra())


def main_output(out) -> torch.Tensor:
    """The tensor a user would keep: the output itself, or the first one of an RNN's tuple."""
    while isinstance(out, (tuple, list)):
        out = out[0]
    return out


def total(out) -> torch.Tensor:
    """Sum of every floating output, nested tuples included (LSTM returns `out, (h, c)`)."""
    if isinstance(out, (tuple, list)):
        return sum(total(o) for o in out)
    return out.sum()


def mutate(t: torch.Tensor) -> None:
    """What a user's `t.mul_(...)` would do: a no-op value-wise, but it bumps the version counter."""
    with torch.no_grad():
        t.mul_(1)


def backward_raises(out) -> bool:
    """True iff backward fails because a saved tensor was modified in place (other errors propagate)."""
    try:
        total(out).backward()
    except RuntimeError as error:
        if INPLACE_ERROR in str(error):
            return True
        raise
    return False


def mutate_parameters(m: nn.Module) -> None:
    """What `optimizer.step()` does between a forward and a late backward: every parameter changes in place."""
    for p in m.parameters():
        mutate(p)


def verb(raises: bool) -> str:
    return "makes backward raise" if raises else "leaves backward working"


def says(predicted: bool) -> str:
    return "the table predicts it raises" if predicted else "the table predicts it is safe"


def saved(when: Saves, *, other_requires_grad: bool) -> bool:
    """Whether a tensor saved `when` is saved, given that the tensor named by the condition
    (the weight for IF_WEIGHT_REQUIRES_GRAD, the input for IF_INPUT_REQUIRES_GRAD) does or not."""
    if when is Saves.ALWAYS:
        return True
    if when is Saves.NEVER:
        return False
    return other_requires_grad


@pytest.fixture(autouse=True)
def _deterministic():
    torch.default_generator.manual_seed(0)  # CPU only: torch.manual_seed also records stacks for lazy devices


# ------------------------------------------------------------------------------------------------ tests


def test_enough_table_entries_are_checked():
    assert len(set(NAMES)) >= MIN_CHECKED_ENTRIES, f"only {len(set(NAMES))} module entries are checked"
    unknown = sorted(set(NAMES) - set(MODULES))
    assert not unknown, f"cases for modules missing from the table: {unknown}"


def test_every_table_entry_is_checked():
    assert sorted(set(MODULES) - set(CASES)) == [], "table entries without a torch check in CASES"


@pytest.mark.parametrize("name", NAMES)
def test_mutating_input_after_call(name):
    facts = MODULES[name]
    m = build(name)
    x = make_input(name)
    out = call(name, m, x)
    mutate(x)
    raises = backward_raises(out)
    # Default weights are trainable, and an index input (Embedding) never requires grad.
    predicted = saved(facts.saves_input, other_requires_grad=True)
    assert raises == predicted, f"mutating the input of {name} after the call {verb(raises)}; {says(predicted)}"


@pytest.mark.parametrize("name", NAMES)
def test_mutating_output_after_call(name):
    facts = MODULES[name]
    m = build(name)
    out = call(name, m, make_input(name))
    mutate(main_output(out))
    raises = backward_raises(out)
    assert raises == facts.saves_output, (
        f"mutating the output of {name} after the call {verb(raises)}; {says(facts.saves_output)}")


@pytest.mark.parametrize("name", [n for n in WITH_PARAMETERS if CASES[n].index_bound is None])
def test_mutating_input_with_frozen_weights(name):
    facts = MODULES[name]
    m = build(name).requires_grad_(False)
    x = make_input(name)
    out = call(name, m, x)
    mutate(x)
    raises = backward_raises(out)
    predicted = saved(facts.saves_input, other_requires_grad=False)
    assert raises == predicted, (
        f"with frozen weights, mutating the input of {name} after the call {verb(raises)}; {says(predicted)}")


@pytest.mark.parametrize("name, input_requires_grad", [
    pytest.param(name, requires_grad, id=f"{name}-{'input-requires-grad' if requires_grad else 'input-constant'}")
    for name in WITH_PARAMETERS
    for requires_grad in (True, False)
    if not (requires_grad and CASES[name].index_bound is not None)  # indices cannot require grad
])
def test_mutating_weight_after_call(name, input_requires_grad):
    facts = MODULES[name]
    m = build(name)
    out = call(name, m, make_input(name, requires_grad=input_requires_grad))
    mutate_parameters(m)
    raises = backward_raises(out)
    predicted = saved(facts.saves_weight, other_requires_grad=input_requires_grad)
    grad = "requiring grad" if input_requires_grad else "not requiring grad"
    assert raises == predicted, (
        f"mutating the weights of {name} after a call on an input {grad} {verb(raises)}; {says(predicted)}")


RECURRENT = [n for n in NAMES if n in ("RNNCell", "GRUCell", "LSTMCell", "LSTM", "GRU", "RNN")]


def given_state(name: str) -> tuple[torch.Tensor, ...]:
    """A zero recurrent state for `name`'s case: `(batch, hidden)` for a cell, `(layers, batch, hidden)`
    for a whole RNN (inputs are sequence-first); an LSTM's is `(h, c)`."""
    case = CASES[name]
    shape = (case.shape[-2], case.args[1]) if name.endswith("Cell") else (1, case.shape[-2], case.args[1])
    return tuple(torch.zeros(shape) for _ in range(2 if name.startswith("LSTM") else 1))


@pytest.mark.parametrize("name", RECURRENT)
@pytest.mark.parametrize("which", [0, 1])
def test_mutating_recurrent_state_after_call(name, which):
    state = given_state(name)
    if which >= len(state):
        pytest.skip(f"{name} takes one state tensor")
    m = build(name)
    out = m(make_input(name), state if len(state) > 1 else state[0])
    mutate(state[which])
    raises = backward_raises(out)
    assert raises == MODULES[name].saves_state, (
        f"mutating the recurrent state ({which}) given to {name} after the call {verb(raises)}; "
        f"{says(MODULES[name].saves_state)}")


@pytest.mark.parametrize("name", NAMES)
def test_mutating_buffers_after_call(name):
    m = build(name)
    out = call(name, m, make_input(name))
    buffers = [b for b in m.buffers() if b.is_floating_point()]
    with torch.no_grad():
        for buffer in buffers:
            buffer.add_(1)
    raises = backward_raises(out)
    declared = bool(MODULES[name].saves_buffers)
    assert raises == declared, f"mutating the buffers of {name} after the call {verb(raises)}; {says(declared)}"
    assert {n for n, _ in m.named_buffers()} >= set(MODULES[name].saves_buffers)


@pytest.mark.parametrize("name", [n for n in NAMES if not MODULES[n].returns_input])  # those call no op
def test_op_runs(name):
    m, x = build(name), make_input(name)
    with torch.autograd.profiler.profile() as prof:  # sees composite ops and what they decompose into
        call(name, m, x)
    ran = {event.name.removeprefix("aten::") for event in prof.function_events}
    assert MODULES[name].op in ran, f"{name}(x) never runs the ATen op {MODULES[name].op!r}; it runs {sorted(ran)}"


@pytest.mark.parametrize("name", NAMES)
def test_declared_parameters_match(name):
    actual = {n for n, _ in build(name).named_parameters()}
    assert set(MODULES[name].parameters) == actual, f"{name} has parameters {sorted(actual)}"


@pytest.mark.parametrize("name", sorted(RECURRENT_NETWORKS))
@pytest.mark.parametrize("shape", [dict(num_layers=2), dict(bidirectional=True), dict(bias=False),
                                   dict(num_layers=3, bidirectional=True, bias=False), dict(proj_size=2),
                                   dict(num_layers=2, bidirectional=True, proj_size=2)])
def test_recurrent_parameters_of_every_layer_and_direction(name, shape):
    if "proj_size" in shape and name != "LSTM":
        pytest.skip("only an LSTM projects its hidden state")
    actual = [n for n, _ in getattr(nn, name)(4, 3, **shape).named_parameters()]
    assert list(recurrent_parameters(**shape)) == actual
    assert recurrent_parameters() == MODULES[name].parameters


class _Scaled(nn.Module):
    def forward(self, weight):
        return 2 * weight


@pytest.mark.parametrize("qualified", sorted(PARAMETRIZATIONS))
@pytest.mark.parametrize("tensor", ["weight", "bias"])
def test_parametrizations_replace_the_tensor_by_their_parameters(qualified, tensor):
    """The module comes back with `tensor` computed (no leaf, requiring grad) from the parameters the
    table names, and its forward saves what that computation gives (its input is saved by `linear`)."""
    if tensor == "bias" and qualified.endswith(("orthogonal", "spectral_norm")):
        pytest.skip("a matrix's parametrization")
    module_path, function_name = qualified.rsplit(".", 1)
    function = getattr(importlib.import_module(module_path), function_name)
    linear = nn.Linear(4, 3)
    extra = (_Scaled(),) if function_name == "register_parametrization" else ()
    assert function(linear, tensor, *extra) is linear
    expected = {"weight", "bias"} - {tensor} | {p.format(name=tensor) for p in PARAMETRIZATIONS[qualified]}
    assert {n for n, _ in linear.named_parameters()} == expected
    x = torch.randn(2, 4, requires_grad=True)
    out = linear(x)
    value = getattr(linear, tensor)  # as the forward computed it (the old functions set it before each call)
    assert value.requires_grad and value.grad_fn is not None
    mutate(x)
    assert backward_raises(out)


@pytest.mark.parametrize("qualified", sorted(PARAMETRIZATIONS))
def test_parametrizations_saving_their_originals(qualified):
    """A forward saves the tensors the parametrization computes the weight from exactly for those
    `PARAMETRIZATIONS_SAVING` names: changing one in place (under no_grad) before backward raises.
    (`register_parametrization` runs the user's module, here `2 * weight`, which saves nothing.)"""
    module_path, function_name = qualified.rsplit(".", 1)
    function = getattr(importlib.import_module(module_path), function_name)
    extra = (_Scaled(),) if function_name == "register_parametrization" else ()
    raised = []
    for original in PARAMETRIZATIONS[qualified]:
        linear = nn.Linear(4, 3)
        function(linear, "weight", *extra)
        out = linear(torch.randn(2, 4))  # an input without grad: the weight's own computation saves
        with torch.no_grad():
            linear.get_parameter(original.format(name="weight")).add_(0.5)
        raised.append(backward_raises(out))
    saving = qualified in PARAMETRIZATIONS_SAVING
    assert raised == [saving] * len(raised)


@pytest.mark.parametrize("name", WITH_INPLACE)
def test_inplace_argument_position(name):
    facts = MODULES[name]
    cls = getattr(nn, name)
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]  # drop self
    assert params[facts.inplace_position].name == "inplace", (
        f"argument {facts.inplace_position} of {name}(...) is {params[facts.inplace_position].name!r}")
    given = CASES[name].args
    positional = [*given, *(p.default for p in params[len(given):facts.inplace_position]), True]
    assert cls(*positional).inplace is True, f"{name}{tuple(positional)} is not in place"
    assert cls(*given, inplace=True).inplace is True
    assert cls(*given).inplace is False


@pytest.mark.parametrize("name", WITH_INPLACE)
def test_inplace_form_bumps_a_saved_input(name):
    # sigmoid saves its output: an in-place module applied to it breaks sigmoid's backward.
    m = build(name, inplace=True)
    s = torch.sigmoid(make_input(name))
    out = m(s)
    assert out is s, f"{name}(inplace=True) returns a new tensor"
    assert backward_raises(out), f"{name}(inplace=True) on the output of sigmoid leaves backward working"


@pytest.mark.parametrize("name", WITH_INPLACE)
def test_inplace_form_own_save(name):
    facts = MODULES[name]
    m = build(name, inplace=True)
    t = make_input(name)  # saved by nobody
    out = m(t)
    assert out is t, f"{name}(inplace=True) returns a new tensor"
    mutate(out)
    raises = backward_raises(out)
    predicted = facts.inplace is InplaceSaves.RESULT
    assert raises == predicted, (
        f"mutating the result of {name}(inplace=True) after the call {verb(raises)}; {says(predicted)} "
        f"(inplace={facts.inplace.value})")


@pytest.mark.parametrize("name", NAMES)
def test_returns_input(name):
    facts = MODULES[name]
    x = make_input(name)
    in_train = call(name, build(name, train=True), x) is x
    assert in_train == facts.returns_input, f"in train mode {name}(x) is x: {in_train}"
    in_eval = call(name, build(name, train=False), x) is x
    assert in_eval == (facts.returns_input or facts.returns_input_in_eval), f"in eval mode {name}(x) is x: {in_eval}"


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("name", NAMES)
def test_output_shares_input_version(name, train):
    facts = MODULES[name]
    x = make_input(name)
    out = main_output(call(name, build(name, train=train), x))
    before = out._version
    mutate(x)
    changed = out._version != before
    predicted = facts.returns_input or facts.output_views_input or (
        not train and (facts.returns_input_in_eval or facts.output_view_in_eval))
    mode = "train" if train else "eval"
    bumps = "bumps" if changed else "does not bump"
    assert changed == predicted, f"in {mode} mode, mutating x {bumps} the version of {name}(x)"
