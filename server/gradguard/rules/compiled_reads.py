"""What inductor's compiled backward does with a save its region made when code outside the region
changes it in place, as measured on torch 2.13 by running each case eager and compiled (the labelled programs
tests/programs/compiled_* and tests/test_compiled.py run a case of each row):

| save (changed after the compiled call) | eager | inductor |
|---|---|---|
| `x` of `x @ w`, `torch.mm(x, w)`, `x.matmul(w)`, `torch.bmm(x, w)`, `x[:, :2] @ w`; `w` of `x @ w` | raises | silent: gradient from the changed value |
| `x` of `x @ W.T`, `x @ w.t()`, `x @ w.transpose(0, 1)`, `x.T @ w`; `W` of `x @ W.T` (2-D) | raises | raises |
| `x` of `x @ W.T` with a 3-D `x`, `torch.bmm(x, w.transpose(1, 2))` | raises | silent |
| the input of `x * w`, `torch.sigmoid(x * w)`, `F.linear`, `nn.Linear`; the output of `sigmoid`, `tanh`, `exp` | raises | raises |
| the output of `relu` | raises | no error: its mask, made before the change |
"""

from __future__ import annotations

from enum import Enum

import libcst as cst

from gradguard.analysis.values import SavedRecord
from gradguard.knowledge import surface


class Read(Enum):
    """How inductor's backward reads a save changed outside its region."""

    CHECKED = "checked"  # its version checked: `backward()` raises, from inside the generated code
    UNCHECKED = "unchecked"  # through a view the forward made: no error, the gradient from the changed value
    MASKED = "masked"  # through a mask the forward made: no error, the gradient from the value before the change
    BY_RANK = "by rank"  # checked when both operands are matrices (2-D), unchecked for batches of them


def inductor_read(record: SavedRecord) -> Read:
    """How inductor's backward reads `record`'s save (made inside its region) once it is changed outside."""
    op = record.aten_op.split(".", 1)[0]
    if record.what == "output":
        return Read.MASKED if op in surface.COMPILED_MASKED_OUTPUTS else Read.CHECKED
    if op not in surface.COMPILED_PRODUCTS or record.what not in ("input", "`mat2` argument"):
        return Read.CHECKED
    operands = _operands(record.node)
    if operands is None:
        return Read.UNCHECKED
    changed, other = operands if record.what == "input" else operands[::-1]
    if _transposed(changed):
        return Read.CHECKED
    product = _product(record.node)
    if not _transposed(other) or product in surface.BATCHED_PRODUCTS:
        return Read.UNCHECKED
    return Read.CHECKED if product in surface.MATRIX_PRODUCTS else Read.BY_RANK


def _product(node: cst.CSTNode) -> str | None:
    """`mm`, `bmm` or `matmul` as the code spells the product (`@`: matmul)."""
    if isinstance(node, cst.BinaryOperation):
        return "matmul"
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value
    return None


def _operands(node: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """The two operands of `a @ b`, `torch.mm(a, b)` or `a.mm(b)` (None: not written so)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
        return node.left, node.right
    if _product(node) not in surface.COMPILED_PRODUCTS:
        return None
    positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
    if len(positional) == 2:
        return positional[0], positional[1]
    if len(positional) == 1:
        return node.func.value, positional[0]
    return None


def _transposed(operand: cst.BaseExpression) -> bool:
    """Whether the operand is written transposed: `w.T`, `w.t()`, `w.transpose(0, 1)`, `w.permute(1, 0)`."""
    if isinstance(operand, cst.Attribute):
        return operand.attr.value in surface.TRANSPOSED_ATTRIBUTES
    return isinstance(operand, cst.Call) and isinstance(operand.func, cst.Attribute) \
        and operand.func.attr.value in surface.TRANSPOSING_METHODS
