"""Views torch restricts beyond a multi-output view op's own outputs: a view of such an output (torch names
the later view's node), `detach_()` on a view, the outputs of a fully backward-hooked module. Each message
is torch's, checked by running the programs in tests/programs/ (and in tests/restricted_views/, those whose
error the shared corpus's labeller does not know: `detach_()`'s); `main()` runs in-process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gradguard.__main__ import main

from helpers import markers, write

pytestmark = pytest.mark.usefixtures("isolated")

CHUNK_VIEW = """\
import torch
x = torch.randn(3, 5, 12, requires_grad=True)
q, k, v = (x * 2).chunk(3, dim=-1)
{view}.add_(1.0)
"""


def check(tmp_path, capsys, text: str) -> tuple[int, list[str]]:
    path = write(tmp_path / "prog.py", text)
    code = main(["check", "--no-config", "--no-cache", "--output-format", "concise", str(path)])
    lines = capsys.readouterr().out.replace(str(path), "prog.py").replace(" [*]", "").splitlines()
    return code, [line for line in lines if line.startswith("prog.py:")]  # whether a fix is offered aside


@pytest.mark.parametrize(("view", "node"), [
    ("q.reshape(3, 5, 2, 2).permute(0, 2, 1, 3)", "Permute"),
    ("q.reshape(3, 5, 2, 2)", "ReshapeAlias"),
    ("q.transpose(0, 1)", "Transpose"),
    ("q.movedim(0, 1)", "Permute"),
    ("q.squeeze(0)", "Squeeze1"),
    ("q[0]", "Select"),
    ("q[0].T", "Permute"),
])
def test_a_view_of_a_chunk_output_is_reported_with_the_node_torch_names(tmp_path, capsys, view, node):
    assert check(tmp_path, capsys, CHUNK_VIEW.format(view=view)) == (1, [
        f"prog.py:4:1: GG003 [error] `{view}` is a view of one of several views returned by `.chunk`, restricted as "
        f"they are; `add_` changes it in place, so PyTorch raises \"Output 0 of {node} is a view and is being "
        f"modified inplace. This view is the output of a function that returns multiple views...\"."])


def test_a_chunk_output_itself_is_still_named_by_its_own_node(tmp_path, capsys):
    assert check(tmp_path, capsys, CHUNK_VIEW.format(view="q")) == (1, [
        "prog.py:4:1: GG003 [error] `q` is one of several views returned by `.chunk`; `add_` changes it in place, "
        "so PyTorch raises \"Output 0 of Split is a view and is being modified inplace\"."])


DETACH = """\
import torch
x = torch.randn(4, 6, requires_grad={grad})
out = x * 2
h = {made}
h.detach_()
"""


@pytest.mark.parametrize("grad", ["True", "False"])
@pytest.mark.parametrize("made", ["out[:, -1]", "out.t()", "out.chunk(2)[0]"])
def test_detach_in_place_of_a_view_is_gg003_quoting_torch(tmp_path, capsys, made, grad):
    assert check(tmp_path, capsys, DETACH.format(made=made, grad=grad)) == (1, [
        "prog.py:5:1: GG003 [error] `h` is a view of another tensor, and `detach_()` cannot detach a view in place, "
        "so PyTorch raises \"Can't detach views in-place. Use detach() instead...\"."])


@pytest.mark.parametrize("made", ["out", "out.detach()", "out.clone()", "out[:, -1].contiguous()"])
def test_detach_in_place_of_a_tensor_that_is_no_view_is_fine(tmp_path, capsys, made):
    assert check(tmp_path, capsys, DETACH.format(made=made, grad="True")) == (0, [])


def test_detach_in_place_of_a_view_is_fixed_by_detaching_out_of_place(tmp_path, capsys):
    path = write(tmp_path / "prog.py", DETACH.format(made="out[:, -1]", grad="True"))
    main(["check", "--no-config", "--no-cache", "--fix", str(path)])
    assert path.read_text().splitlines()[-1] == "h = h.detach()"


def test_explain_says_detach_in_place_of_what_may_be_a_copy_is_not_reported(tmp_path, capsys):
    path = write(tmp_path / "prog.py", DETACH.format(made="out[:, -1].contiguous()", grad="True"))
    main(["explain", f"{path}:5"])
    out = capsys.readouterr().out
    assert ("    GG003 not reported: `detach_()` of what may be a copy rather than a view (`.contiguous()`, "
            "`.reshape()`)\n") in out
    assert "    GG001 not reported: `detach_()` changes no values: only its refusal of a view (GG003) can be reported\n" in out


HOOKED = """\
import torch
from torch import nn
layer = nn.Linear(4, 4)
layer.{hook}(lambda *args: None)
x = torch.randn(2, 4)
y = layer(x)
y.relu_()
"""


@pytest.mark.parametrize("hook", ["register_full_backward_hook", "register_full_backward_pre_hook"])
def test_the_output_of_a_fully_backward_hooked_module_may_not_change_in_place(tmp_path, capsys, hook):
    assert check(tmp_path, capsys, HOOKED.format(hook=hook)) == (1, [
        "prog.py:7:1: GG003 [error] `y` is a view that a module with a full backward hook "
        "(`register_full_backward_hook`) handed on as a `BackwardHookFunction`'s output; `relu_` changes it in place, "
        "so PyTorch raises \"Output 0 of BackwardHookFunction is a view and is being modified inplace. This view was "
        "created inside a custom Function (or because an input was returned as-is)...\"."])


@pytest.mark.parametrize("hook", ["register_forward_hook", "register_backward_hook"])
def test_the_output_of_a_module_with_another_hook_may_change_in_place(tmp_path, capsys, hook):
    assert check(tmp_path, capsys, HOOKED.format(hook=hook)) == (0, [])


DETACH_PROGRAMS = sorted((Path(__file__).parent / "restricted_views").glob("*.py"))


@pytest.mark.parametrize("program", DETACH_PROGRAMS, ids=lambda p: p.name)
def test_detach_programs_are_labelled_by_torch_and_found_exactly(program, capsys):
    ran = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=300)
    expected = markers(program)
    assert (ran.returncode == 0) == (not expected), ran.stderr
    if expected:
        assert ran.stderr.strip().splitlines()[-1].startswith(
            "RuntimeError: Can't detach views in-place. Use detach() instead.")
    main(["check", "--no-config", "--no-cache", "--output-format", "concise", str(program)])
    found = {(int(line.split(":")[1]), line.split(" ")[1]) for line in capsys.readouterr().out.splitlines()
             if line.startswith(str(program))}
    assert found == expected
