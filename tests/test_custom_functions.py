"""Custom `torch.autograd.Function`s: `Fn.apply` runs `forward` with grad off; what `ctx.save_for_backward`
was given is saved at the call, an output that is an input or a view of one is a custom-Function
view (GG003 quoting torch), a tensor kept as a `ctx` attribute is not checked. Each program's
verdict is torch's (tests/programs/ holds the labelled ones); `main()` runs in-process."""

from __future__ import annotations

import pytest

from gradguard.__main__ import main

from helpers import write

pytestmark = pytest.mark.usefixtures("isolated")

SQUARE = """\
import torch

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        {keep}
        return x * x

    @staticmethod
    def backward(ctx, g):
        return 2 * g

w = torch.randn(6, requires_grad=True)
h = w * 3
{call}
h.add_(1.0)
y.sum().backward()
"""

SETUP_CONTEXT = """\
import torch

class Square(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g

w = torch.randn(6, requires_grad=True)
h = w * 3
y = Square.apply(h)
h.add_(1.0)
y.sum().backward()
"""

VIEW = """\
import torch

class Flatten(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view(-1)

    @staticmethod
    def backward(ctx, g):
        return g.view(2, 3)

w = torch.randn(2, 3, requires_grad=True)
y = Flatten.apply(w * 3)
{change}
y.sum().backward()
"""

CHANGED_INSIDE = """\
import torch

class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        return x

    @staticmethod
    def backward(ctx, g):
        return 2 * g

w = torch.randn(3, requires_grad=True)
e = w.exp()
y = Double.apply(e)
y.sum().backward()
"""


def check(tmp_path, capsys, text: str) -> tuple[int, list[str]]:
    path = write(tmp_path / "prog.py", text)
    code = main(["check", "--no-config", "--no-cache", "--output-format", "concise", str(path)])
    lines = capsys.readouterr().out.replace(str(path), "prog.py").splitlines()
    return code, [line for line in lines if line.startswith("prog.py")]


@pytest.mark.parametrize("call", ["y = Square.apply(h)", "square = Square.apply\ny = square(h)"])
def test_an_input_saved_with_save_for_backward_and_changed_in_place_is_gg001(tmp_path, capsys, call):
    code, found = check(tmp_path, capsys, SQUARE.format(keep="ctx.save_for_backward(x)", call=call))
    line = 15 + call.count("\n")
    assert code == 1
    assert found == [f"prog.py:{line + 1}:1: GG001 [error] [*] `h` is the input of `Square.apply` (line {line}), which "
                     "it saves for backward; `add_` changes it in place, so `backward()` will raise \"one of the variables needed for gradient computation has been modified by an inplace operation\"."]


def test_setup_context_saves_as_forward_does(tmp_path, capsys):
    code, found = check(tmp_path, capsys, SETUP_CONTEXT)
    assert code == 1
    assert [f.split(" [error]")[0] for f in found] == ["prog.py:21:1: GG001"]


def test_a_tensor_kept_as_a_ctx_attribute_is_not_version_checked(tmp_path, capsys):
    assert check(tmp_path, capsys, SQUARE.format(keep="ctx.x = x", call="y = Square.apply(h)")) == (0, [])


@pytest.mark.parametrize("change, message", [
    ("y.add_(1.0)", "prog.py:14:1: GG003 [error] [*] `y` is a view that the custom autograd Function `Flatten` "
                    "returned (an input, or a view); `add_` changes it in place, so PyTorch raises \"Output 0 of Flatten is a view "
                    "and is being modified inplace. This view was created inside a custom Function (or because an "
                    "input was returned as-is)...\"."),
    ("y[:2].mul_(2)", "prog.py:14:1: GG003 [error] `y[:2]` is a view of what the custom autograd Function `Flatten` "
                      "returned (an input, or a view); `mul_` changes it in place, so PyTorch raises \"... is a "
                      "view and is being modified inplace. This view was created inside a custom Function (or because "
                      "an input was returned as-is)...\"."),
])
def test_a_view_a_custom_function_returns_may_not_change_in_place(tmp_path, capsys, change, message):
    assert check(tmp_path, capsys, VIEW.format(change=change)) == (1, [message])


def test_forward_changing_an_input_another_op_saved_is_gg001_at_the_change(tmp_path, capsys):
    code, found = check(tmp_path, capsys, CHANGED_INSIDE)
    assert code == 1
    assert [f.split(" [error]")[0] for f in found] == ["prog.py:6:9: GG001"]


def test_explain_says_a_custom_function_view_may_not_change_in_place(tmp_path, capsys):
    path = write(tmp_path / "prog.py", VIEW.format(change="y.add_(1.0)"))
    main(["explain", f"{path}:14"])
    out = capsys.readouterr().out
    assert "    - a view the custom autograd Function `Flatten` returned (or a view of one): changing it in place raises\n" in out
    assert "    GG003 reported [error]: `y` is a view that the custom autograd Function `Flatten` returned" in out
