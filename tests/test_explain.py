"""`gradguard explain FILE:LINE`: the reasoning behind a verdict, printed — each name's value and
each rule's verdict on each in-place change of the line, the reason a rule dropped a change
coming from where the rule drops it. Outputs are compared exactly; `main()` runs in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradguard.__main__ import main

from helpers import write

pytestmark = pytest.mark.usefixtures("isolated")

# A forward pass whose output `sigmoid` saved, changed in place before the backward (line 7)
# or after it (line 9).
BEFORE_BACKWARD = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
x = torch.randn(8, 4)
h = torch.sigmoid(model(x))
h += 1
loss = h.sum()
loss.backward()
"""
AFTER_BACKWARD = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
x = torch.randn(8, 4)
h = torch.sigmoid(model(x))
loss = h.sum()
loss.backward()
h += 1
"""
# Plain SGD by hand: the parameters change under no_grad (line 12); `lr` is a number (line 5).
MANUAL_SGD = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
lr = 1e-3
for batch in torch.randn(3, 8, 4):
    loss = model(batch).pow(2).mean()
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
"""
# A trainer's step that no analysed code calls: the output `sigmoid` saved is changed in place
# (line 11) and only a number leaves the step (`TRAIN_STEP`), or the tensor itself (`.item()` dropped).
TRAIN_STEP = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.net = nn.Linear(4, 4)

    def train_step(self, x):
        h = torch.sigmoid(self.net(x))
        h.mul_(2)
        return h.sum().item()
"""
# A helper of a package the analysis cannot read: what it returns is unknown, and so is the
# graph of the layer's output computed from it (line 8).
CALL_NOT_FOLLOWED = """\
import torch
import torch.nn as nn
from augmentations import mixup

head = nn.Linear(4, 2)
x = torch.randn(8, 4)
mixed = mixup(x)
logits = head(mixed)
"""

NOT_A_LEAF = "    GG002 not reported: the tensor is not a leaf (an op computed it) nor a view of one\n"
NOT_A_VIEW = ("    GG003 not reported: the tensor is no view torch restricts: an output of `chunk`/`split`/`unbind`, "
              "a view made under `no_grad`, one a custom Function or a backward-hooked module returned\n")
NOT_THROUGH_DATA = "    GG004 not reported: it does not write through `.data` or an `unsafe_*` view\n"
NOT_COMPILED = ("    GG005 not reported: it changes no save that a region compiled by inductor reads unchecked (a matrix "
                "product's operand, neither operand written transposed), from outside that region\n")
GRAD_OFF = "grad is off here (`torch.no_grad()`, `inference_mode()`, `set_grad_enabled(False)`)"
A_NUMBER = ("  `lr` (column {column}): a Python number: 0.001\n"
            "    - not a tensor: autograd never sees it, and an in-place operator on it rebinds the name\n")


def explain(path: Path, line: int, capsys, *flags: str) -> str:
    assert main(["explain", f"{path}:{line}", *flags]) == 0
    return capsys.readouterr().out


def test_a_saved_tensor_changed_before_backward_is_reported_with_the_save_and_the_backward(tmp_path, capsys):
    path = write(tmp_path / "train.py", BEFORE_BACKWARD)
    assert explain(path, 7, capsys) == f"""\
{path}:7: h += 1
  `h` (column 1): a tensor, the output of `torch.sigmoid` (line 6)
    - requires grad; not a leaf; graph known: 2 saves
    - saved for backward: its output by `torch.sigmoid` (line 6); an in-place change before that backward raises
  in-place change (column 1): `+=` of `h`
    - grad on
    - meets a save: its output by `torch.sigmoid` (line 6)
    - a backward pass runs through what it changes: line 9
    GG001 reported [error]: `h` is the output of `torch.sigmoid` (line 6), which it saves for backward; `+=` \
changes it in place, so `backward()` will raise \"one of the variables needed for gradient computation has been modified by an inplace operation\".
{NOT_A_LEAF}{NOT_A_VIEW}{NOT_THROUGH_DATA}{NOT_COMPILED}"""


def test_the_same_change_after_backward_is_not_reported_because_the_backward_came_first(tmp_path, capsys):
    path = write(tmp_path / "train.py", AFTER_BACKWARD)
    assert explain(path, 9, capsys) == f"""\
{path}:9: h += 1
  `h` (column 1): a tensor, the output of `torch.sigmoid` (line 6)
    - requires grad; not a leaf; graph known: 2 saves
    - nothing has saved it for backward here: changing it in place here leaves backward intact
  in-place change (column 1): `+=` of `h`
    - grad on
    - meets no live save (a backward pass freed them: line 8)
    - no backward pass is known to run through what it changes
    GG001 not reported: the backward pass came before it: `loss.backward()` (line 8) freed what was saved
{NOT_A_LEAF}{NOT_A_VIEW}{NOT_THROUGH_DATA}{NOT_COMPILED}"""


def test_a_parameter_changed_under_no_grad_is_not_reported_because_grad_is_off(tmp_path, capsys):
    path = write(tmp_path / "sgd.py", MANUAL_SGD)
    assert explain(path, 12, capsys) == f"""\
{path}:12: p -= lr * p.grad
  `p` (column 13): a tensor, the bias of `nn.Linear` (line 4)
    - requires grad; a leaf; graph known: empty
    - a leaf that requires grad: changing it in place outside `torch.no_grad()` raises
{A_NUMBER.format(column=18)}\
  in-place change (column 13): `-=` of `p`
    - grad off
    - meets no live save
    - no backward pass is known to run through what it changes
    GG001 not reported: no save of the tensor it changes (nor of one sharing its version counter) is live \
here: none was made, or an earlier change met it and is reported there
    GG002 not reported: {GRAD_OFF}
    GG003 not reported: {GRAD_OFF}
{NOT_THROUGH_DATA}{NOT_COMPILED}"""


def test_a_change_whose_graph_dies_when_the_entry_point_returns_is_not_reported(tmp_path, capsys):
    path = write(tmp_path / "trainer.py", TRAIN_STEP)
    assert explain(path, 11, capsys) == f"""\
{path}:11: h.mul_(2)
  `h` (column 9): a tensor, the output of `torch.sigmoid` (line 10)
    - requires grad; not a leaf; graph known: 2 saves
    - saved for backward: its output by `torch.sigmoid` (line 10); an in-place change before that backward raises
  in-place change (column 9): `mul_` of `h`
    - grad on
    - meets a save: its output by `torch.sigmoid` (line 10)
    - no backward pass can run through what it changes: its graph dies when `train_step` returns
    GG001 not reported: the graph holding the save is not used after the function returns: nothing that can \
reach it escapes (returned, yielded, kept by `self`, an argument, a global or a call not followed)
{NOT_A_LEAF}{NOT_A_VIEW}{NOT_THROUGH_DATA}{NOT_COMPILED}"""


def test_the_same_change_is_reported_when_the_tensor_it_reaches_is_returned(tmp_path, capsys):
    path = write(tmp_path / "trainer.py", TRAIN_STEP.replace("h.sum().item()", "h.sum()"))
    assert "    - a backward pass may run through what it changes (if one runs through what the function returns)\n" \
        "    GG001 reported [warning]: `h` is the output of `torch.sigmoid` (line 10), which it saves for backward; " \
        "`mul_` changes it in place, so `backward()` may raise \"one of the variables needed for gradient computation has been modified by an inplace operation\" (this holds if a backward pass later runs through it; " \
        "found analysing `train_step` on its own: no caller of it is known).\n" in explain(path, 11, capsys)


def test_a_value_computed_from_a_call_not_followed_has_an_unknown_graph(tmp_path, capsys):
    path = write(tmp_path / "mix.py", CALL_NOT_FOLLOWED)
    assert explain(path, 8, capsys) == f"""\
{path}:8: logits = head(mixed)
  `logits` (column 1): a tensor, the output of `Linear` (line 8)
    - requires grad; not a leaf; graph unknown (computed from values the analysis lost)
    - nothing has saved it for backward here: changing it in place here leaves backward intact
  `head` (column 10): an `nn.Module`: `Linear`
    - parameters that require grad: yes
  `mixed` (column 15): unknown: the analysis lost what it is (a call it could not follow, paths that disagree)
    - nothing is concluded from it: it causes no finding
  no in-place change of a tensor here
"""


def test_a_python_number_is_not_a_tensor(tmp_path, capsys):
    path = write(tmp_path / "sgd.py", MANUAL_SGD)
    assert explain(path, 5, capsys) == f"{path}:5: lr = 1e-3\n{A_NUMBER.format(column=1)}  no in-place change of a tensor here\n"


def test_json_holds_the_same_facts(tmp_path, capsys):
    path = write(tmp_path / "train.py", AFTER_BACKWARD)
    found = json.loads(explain(path, 9, capsys, "--output-format", "json"))
    assert found["filename"] == str(path) and found["line"] == 9 and found["source"] == "h += 1"
    (name,) = found["names"]
    assert name == {"name": "h", "column": 1, "value": {
        "kind": "tensor", "summary": "the output of `torch.sigmoid` (line 6)",
        "notes": ["requires grad; not a leaf; graph known: 2 saves",
                  "nothing has saved it for backward here: changing it in place here leaves backward intact"],
        "requires_grad": "yes", "is_leaf": False, "graph": "known", "saves_in_graph": 2, "saved": [], "aliases": []}}
    (change,) = found["changes"]
    assert {k: v for k, v in change.items() if k != "verdicts"} == {
        "column": 1, "verb": "`+=`", "target": "h", "grad_enabled": "yes", "saved": [], "backward_follows": "no",
        "backward_at": None, "freed_by": "line 8", "dies_in": None, "called_from": [], "assumes": None}
    assert [(v["code"], v["reported"], v["reason"]) for v in change["verdicts"]] == [
        ("GG001", False, "FREED_BY_BACKWARD"), ("GG002", False, "NOT_A_LEAF"), ("GG003", False, "NOT_SUCH_VIEW"),
        ("GG004", False, "NOT_THROUGH_DATA"), ("GG005", False, "NOT_COMPILED_SAVE")]


def test_a_change_the_rule_keeps_but_noqa_silences_says_so(tmp_path, capsys):
    path = write(tmp_path / "train.py", BEFORE_BACKWARD.replace("h += 1", "h += 1  # noqa: GG001"))
    assert "    GG001 not reported: `# noqa` on the line silences it\n" in explain(path, 7, capsys)
    assert main(["check", "--no-cache", str(path)]) == 0
    capsys.readouterr()


def test_the_alias_class_names_the_views_of_a_tensor(tmp_path, capsys):
    path = write(tmp_path / "views.py", "import torch\nx = torch.randn(4, 4, requires_grad=True)\n"
                                        "y = x.exp()\nrow = y[0]\nrow.zero_()\ny.sum().backward()\n")
    out = explain(path, 5, capsys)
    assert "    - shares its version counter with `y`: an in-place change of one is a change of all\n" in out
    assert "    - meets a save: its output by `x.exp` (line 3)\n" in out and "GG001 reported [error]" in out


@pytest.mark.parametrize(("location", "error"), [
    ("train.py", "argument FILE:LINE: expected FILE:LINE such as train.py:12 (lines count from 1), not 'train.py'"),
    ("train.py:0", "not 'train.py:0'"),
    ("train.py:seven", "not 'train.py:seven'"),
    ("absent.py:3", "gradguard: no such file: absent.py"),
    ("train.py:40", "gradguard: train.py has 9 lines: there is no line 40"),
    ("nb.ipynb:2", "gradguard: nb.ipynb is a notebook: explain reads Python files"),
])
def test_a_location_that_cannot_be_explained_exits_2_saying_why(tmp_path, capsys, monkeypatch, location, error):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "train.py", BEFORE_BACKWARD)
    try:
        code = main(["explain", location])
    except SystemExit as exit:  # argparse's own usage errors
        code = exit.code
    assert code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and error in captured.err, captured.err


def test_a_file_that_does_not_parse_exits_2(tmp_path, capsys):
    path = write(tmp_path / "broken.py", "import torch\nx = (\n")
    assert main(["explain", f"{path}:1"]) == 2
    assert capsys.readouterr().err.startswith(f"gradguard: {path} cannot be analysed: ")


def test_the_example_of_the_explain_page_is_what_explain_prints(capsys, monkeypatch):
    root = Path(__file__).resolve().parent.parent
    page = (root / "docs" / "explain.md").read_text()
    block = page.split("```\n$ gradguard explain ", 1)[1].split("```", 1)[0]
    location, shown = block.split("\n", 1)
    monkeypatch.chdir(root)
    assert main(["explain", location]) == 0
    assert capsys.readouterr().out == shown


PROGRAMS = Path(__file__).parent / "programs"


def test_a_backward_from_what_a_call_not_followed_returned_may_reach_the_saves_of_its_arguments(capsys):
    path = PROGRAMS / "config_loss_criterion_sigmoid_clamp_.py"
    assert explain(path, 31, capsys).splitlines()[1:3] == [
        "  `loss` (column 1): unknown: what a call the analysis did not follow returned",
        "    - a backward pass from it may reach the 2 saves of the tensors passed to that call, and no others"]
    change = explain(path, 28, capsys)
    assert "    - a backward pass may run through what it changes (it reaches it through a call the analysis did " \
           "not follow): line 31\n" in change
    assert "    GG001 reported [warning]: `probs` is the output of `torch.sigmoid` (line 27), which it saves for " \
           "backward; `clamp_` changes it in place, so `backward()` may raise \"one of the variables needed for gradient computation has been modified by an inplace operation\" (the backward pass reaches it only " \
           "through a call the analysis did not follow).\n" in change


def test_a_backward_on_a_known_empty_graph_confirms_no_pending_change(capsys):
    step = explain(PROGRAMS / "temperature_scalar_loss_after_step_ok.py", 19, capsys)
    assert "    - meets a save: its weight by `nn.Linear` (line 8)\n    - no backward pass is known to run through " \
           "what it changes\n    GG001 not reported: no later backward pass is known to run through what it " \
           "changes\n" in step
    twin = explain(PROGRAMS / "temperature_scalar_loss_after_step_val_backward.py", 19, capsys)
    assert "    - a backward pass runs through what it changes: line 23\n    GG001 reported [error]" in twin


GATE_WITH_DEFAULT = """\
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, width, uniform_init=False):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(width))
        if uniform_init:
            self.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return torch.sigmoid(x + self.bias)
"""


def test_a_change_on_a_branch_a_default_skips_says_it_needs_another_value(tmp_path, capsys):
    change = explain(write(tmp_path / "gate.py", GATE_WITH_DEFAULT), 10, capsys)
    assert "    - grad on\n    - on a branch the default of `uniform_init` skips: it runs when a caller passes " \
           "another value\n" in change
    assert "    GG002 reported [warning]: `self.bias` is a leaf that requires grad (an `nn.Parameter`); `uniform_` " \
           "changes it in place outside `torch.no_grad()`, so PyTorch raises \"a leaf Variable that requires grad is " \
           "being used in an in-place operation\" (only when `uniform_init` is given a value other than its default; " \
           "found analysing `__init__` on its own: no caller of it is known).\n" in change


# An op with an operand the analysis lost (`scale`, line 7) keeps its known operand's saves, its
# graph partly unknown; one computed from known values only, none saved (line 8), a known-empty one.
UNKNOWN_OPERAND = """\
import torch
import torch.nn as nn
from schedules import current_scale

head = nn.Linear(4, 2)
scale = current_scale()
logits = head(torch.randn(8, 4)) * scale
noise = torch.randn(8, 2) * 0.1
"""


def test_an_op_with_an_operand_the_analysis_lost_has_a_partly_unknown_graph(tmp_path, capsys):
    path = write(tmp_path / "scaled.py", UNKNOWN_OPERAND)
    assert explain(path, 7, capsys).splitlines()[1:3] == [
        "  `logits` (column 1): a tensor, the output of `*` (line 7)",
        "    - requires grad; not a leaf; graph unknown (computed from values the analysis lost)"]
    assert explain(path, 8, capsys).splitlines()[1:3] == [
        "  `noise` (column 1): a tensor, the output of `*` (line 8)",
        "    - does not require grad; a leaf; graph known: empty"]


# A forward whose output the analysis partly lost (`mixup`, a package it cannot read): a backward
# from it reaches the saves of its known part; `gate`'s (line 12) is in it only when `mixup` gets it.
PARTLY_LOST_FORWARD = """\
import torch
import torch.nn as nn
from augmentations import mixup


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        gate = torch.sigmoid(x)
        gate.mul_(2)
        return self.head(mixup({mixed}))
"""


def test_a_forward_whose_output_is_partly_lost_reaches_only_the_saves_of_its_known_part(tmp_path, capsys):
    path = write(tmp_path / "net.py", PARTLY_LOST_FORWARD.format(mixed="x"))
    assert "    - no backward pass can run through what it changes: its graph dies when `forward` returns\n" \
        in explain(path, 13, capsys)
    path = write(tmp_path / "net.py", PARTLY_LOST_FORWARD.format(mixed="gate"))
    assert "    - a backward pass runs through what it changes\n" in explain(path, 13, capsys)
