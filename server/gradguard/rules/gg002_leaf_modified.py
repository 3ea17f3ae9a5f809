"""An in-place change of a leaf tensor that requires grad, or of a view of one.

## What it does
Finds in-place changes, outside `torch.no_grad()`, of a leaf tensor that requires grad — a
tensor created with `requires_grad=True`, one after `requires_grad_()`, an `nn.Parameter`, a
module's weight or bias — or of a view of one (`w[0] = 1`, `w[:2].mul_(2)`).

## Why is this bad?
A leaf's gradient is accumulated into `.grad`; autograd cannot record how an in-place op changed
the leaf it differentiates with respect to. PyTorch raises at once: `RuntimeError: a leaf
Variable that requires grad is being used in an in-place operation.` (or `a view of a leaf
Variable ...`).
Inside code compiled by `torch.compile` (any backend) the program raises at the region's first
call instead, as dynamo traces it: `torch._dynamo.exc.TorchRuntimeError: RuntimeError when
making fake tensor call`, whose explanation quotes this error.

## Example
```python
w = torch.empty(3, 3, requires_grad=True)
w.uniform_(-0.1, 0.1)   # GG002
```

Use instead:
```python
w = torch.empty(3, 3, requires_grad=True)
with torch.no_grad():
    w.uniform_(-0.1, 0.1)
```
or `nn.init.uniform_(w, -0.1, 0.1)`.

## Fix safety
Wrapping the statement in `with torch.no_grad():` keeps every value: it is what `nn.init` does.
Going through `.data` also works but hides later errors, so it is offered as unsafe.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from gradguard.analysis.events import InplaceChange
from gradguard.analysis.values import Tri
from gradguard.findings import Applicability, Finding, Fix
from gradguard.fixes.edits import clone_result, init_function, through_data, wrap_in_no_grad
from gradguard.rules.base import NotReported, RuleContext

CODE = "GG002"
NAME = "leaf-modified-inplace"


def dropped(change: InplaceChange) -> NotReported | None:
    """Why this rule does not report `change` (None: it does)."""
    target = change.target
    if change.detaches:
        return NotReported.DETACHES
    if not change.bumps_version:
        return NotReported.THROUGH_DATA
    if change.grad_enabled is Tri.NO:
        return NotReported.GRAD_OFF
    if target.is_leaf and target.requires_grad is not Tri.NO:
        return None
    if target.view_of_leaf:  # torch checks multi-output views and views created under no_grad first (GG003)
        return NotReported.VIEW_ERROR_FIRST if target.multi_output_view is not None or target.no_grad_view else None
    return NotReported.REQUIRES_NO_GRAD if target.is_leaf else NotReported.NOT_A_LEAF


def _leaf_kind(change: InplaceChange) -> str | None:
    if dropped(change) is not None:
        return None
    return "leaf" if change.target.is_leaf and change.target.requires_grad is not Tri.NO else "view of a leaf"


def raises_for_leaf(change: InplaceChange) -> bool:
    """Whether PyTorch raises the leaf error here (before any saved-tensor check)."""
    return _leaf_kind(change) is not None


def _certain(change: InplaceChange, kind: str) -> bool:
    target = change.target
    return change.grad_enabled is Tri.YES and (kind != "leaf" or target.requires_grad is Tri.YES) \
        and not target.maybe_other


def raises_surely(change: InplaceChange) -> bool:
    """Whether PyTorch raises the leaf error whenever the change runs."""
    kind = _leaf_kind(change)
    return kind is not None and _certain(change, kind)


def check(context: RuleContext) -> Iterator[Finding]:
    for change in context.changes:
        kind = _leaf_kind(change)
        if kind is None:
            continue
        target = change.target
        certain = _certain(change, kind)
        origin = target.origin.description
        if change.target_node is not None:
            what = f"{context.subject(change)} is a {kind} that requires grad ({origin})"
        else:
            what = f"{origin[:1].upper()}{origin[1:]} is a {kind} that requires grad"
        message = (f"{what}; {change.verb} changes it in place "
                   f"outside `torch.no_grad()`, so PyTorch {'raises' if certain else 'may raise'} "
                   f"\"a {'view of a ' if kind != 'leaf' else ''}leaf Variable that requires grad is being used "
                   f"in an in-place operation\".")
        yield context.immediate_error(CODE, change, certain, message, "the leaf was created here",
                                      fixes(context, change))


def fixes(context: RuleContext, change: InplaceChange) -> tuple[Fix, ...]:
    """`with torch.no_grad():` around the statement, the `nn.init` function, or (unsafe) `.data`; for a
    custom Function whose `forward` marks the leaf dirty, a clone of it as the argument (under
    `no_grad()` its output would not require grad)."""
    offered: list[Fix] = []
    call = change.node
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "apply":
        if change.target_node is None or not any(arg.value is change.target_node for arg in call.args):
            return ()
        return (Fix(f"Give `{context.document.code(call.func)}` a clone (the leaf itself then stays unchanged)",
                    Applicability.UNSAFE,
                    clone_result(context.document, change.target_node)),)
    torch_name = context.import_name("torch")
    if change.statement is not None and torch_name is not None:
        offered.append(Fix("Wrap in `with torch.no_grad():`", Applicability.SAFE,
                           wrap_in_no_grad(context.document, change.statement, torch_name)))
    init_module = context.import_name("torch.nn")
    statement = change.statement
    # a statement of its own, a method of the leaf (not `torch._foreach_lerp_(leaves, ...)`, of `torch`)
    alone = statement is not None and len(statement.body) == 1 and isinstance(statement.body[0], cst.Expr) \
        and statement.body[0].value is change.node and isinstance(change.node, cst.Call) \
        and isinstance(change.node.func, cst.Attribute) and change.node.func.value is change.target_node
    init = init_function(context.document, change.node, f"{init_module}.init") if alone and init_module else None
    if init is not None:
        offered.append(Fix(f"Use `{init[0].content}`", Applicability.SAFE, init))
    data = through_data(context.document, change.node) if alone else None
    if data is not None:
        offered.append(Fix("Change it through `.data` (hides later errors from autograd)", Applicability.UNSAFE, data))
    return tuple(offered)
