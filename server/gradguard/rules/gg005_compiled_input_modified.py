"""An in-place change, outside a compiled region, of a tensor that the region saved for backward.

## What it does
Finds in-place changes (`x.mul_(2)`, `x += 1`, `x[0] = 0`, `optimizer.step()` ...) of a tensor
that code compiled by `torch.compile` saved for its backward pass — its input, or a view of it —
made after the compiled call and before a backward pass through it. Compiled code is a function
or method decorated with `@torch.compile` or `@torch.compile(...)`, `torch.compile(fn_or_module)`,
`module.compile()`, `module.forward = torch.compile(module.forward)` (`self.forward = ...` in
`__init__` too) and `torch._dynamo.optimize(backend)(fn)`.

## Why is this bad?
Eager PyTorch raises at `backward()`: `one of the variables needed for gradient computation has
been modified by an inplace operation` (GG001). A region compiled by inductor, `torch.compile`'s
default backend, saves a matrix product's operand (`x` of `x @ w`, which `w`'s gradient needs, or
`w`, which `x`'s needs) as a view of it, made inside its compiled forward, whose version its
compiled backward does not check: `backward()` raises nothing and computes the gradients from the
changed values (pytorch#197887). The program trains on wrong gradients, silently.

What inductor does, measured on torch 2.13 with the tensor changed after the compiled call:

| saved by the compiled region | eager | inductor |
|---|---|---|
| `x` or `w` of `x @ w`, `torch.mm(x, w)`, `x.matmul(w)`, `torch.bmm(x, w)`, `x[:, :2] @ w` | raises | no error, gradient from the changed value: GG005 |
| `torch.bmm(x, w.transpose(1, 2))`'s `x` | raises | no error, gradient from the changed value: GG005 |
| `x` of `x.T @ w`, `x @ W.T`, `x @ w.t()` (2-D operands); `W` of `x @ W.T` | raises | raises: GG001 |
| `x` of `x @ W.T` with a 3-D `x` | raises | no error (GG001 says both) |
| the input of `x * w`, `torch.sigmoid(x * w)`, `F.linear`, `nn.Linear`; the output of `sigmoid`, `tanh`, `exp` | raises | raises, from inside its generated code: GG001 |
| the output of `relu` | raises | no error, its backward reads a mask made before the change: GG001 says so |

A transposed operand is seen where the product is written (`W.T`, `w.t()`, `w.transpose(...)`,
`w.permute(...)`, `w.mT`); one passed in already transposed is not. With `backend="aot_eager"` or
`backend="eager"` the saves are autograd's own and `backward()` raises as in eager mode: GG001
again. An in-place change inside the compiled region of a tensor the region saved is GG001's too
(the compiled program raises at the region's first call, wrapped in `BackendCompilerFailed`).
`gradguard verify` runs the program eager and compiled and confirms it.

## Example
```python
@torch.compile
def project(feats, w):
    return (feats @ w).relu()

feats = torch.randn(4, 3)
w = torch.randn(3, 2, requires_grad=True)
y = project(feats, w)
feats.mul_(2)        # GG005: `feats @ w` saved feats; w.grad is computed from 2 * feats
y.sum().backward()
```

Use instead:
```python
@torch.compile
def project(feats, w):
    return (feats @ w).relu()

feats = torch.randn(4, 3)
w = torch.randn(3, 2, requires_grad=True)
y = project(feats.clone(), w)
feats.mul_(2)
y.sum().backward()
```

## Fix safety
Passing a clone at the compiled call (`project(feats.clone(), w)`) is safe: the region saves the
clone, which nothing changes. Rewriting the change out of place (`feats = feats.mul(2)`) is safe when
nothing else refers to the changed tensor, unsafe otherwise (what the other names see changes).
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from gradguard.analysis.events import InplaceChange
from gradguard.analysis.values import SavedRecord
from gradguard.findings import Applicability, Finding, Fix, Related, Severity
from gradguard.rules.base import NotReported, RuleContext
from gradguard.rules.gg001_saved_tensor_modified import (
    at_change,
    clone_at_compiled_call,
    compiled_silently,
    unreported,
)

CODE = "GG005"
NAME = "compiled-input-modified-inplace"


def dropped(change: InplaceChange) -> NotReported | None:
    """Why this rule does not report `change` (None: it does)."""
    return NotReported.NOT_COMPILED_SAVE if not compiled_silently(change) else unreported(change)


def check(context: RuleContext) -> Iterator[Finding]:
    reported: set[cst.CSTNode] = set()
    for change in context.changes:
        if change.node in reported or dropped(change) is not None:
            continue
        reported.add(change.node)
        yield _finding(context, change, change.saved[0])


def _finding(context: RuleContext, change: InplaceChange, record: SavedRecord) -> Finding:
    region = record.compiled
    saved = f"the {record.what} of `{record.saved_by}` ({context.where(record.node, record.file, record.scope)})"
    entered = ""
    if region.call is not None:
        entered = f", run by the compiled `{context.code(_callee(region.call))}(...)` " \
                  f"({context.where(region.call, record.file)})"
    message = (f"{context.subject(change)} is {saved}{entered}, which the code compiled by `torch.compile` "
               f"(backend \"{region.backend}\") saves for backward; {change.verb} changes it in place before "
               f"`backward()`. Eager, `backward()` would raise; compiled by {region.backend}, it raises nothing and "
               f"computes the gradients from the changed value (pytorch#197887).")
    return Finding(
        code=CODE,
        severity=Severity.ERROR,
        message=message,
        filename=context.document.filename,
        span=context.document.span(change.node, change.scope),
        related=context.saved_here(record) + _entered_here(context, region.call) + context.called_from(change)
        + context.at_backward(change, "computes the gradients from the changed value here"),
        fixes=_fixes(context, change),
        aten_op=record.aten_op,
    )


def _callee(call: cst.CSTNode) -> cst.CSTNode:
    return call.func if isinstance(call, cst.Call) else call


def _entered_here(context: RuleContext, call: cst.CSTNode | None) -> tuple[Related, ...]:
    """Related information: the call that ran the compiled region (when it is in this file)."""
    if call is None or not context.in_this_file(call):
        return ()
    return (Related(context.document.filename, context.document.span(call),
                    f"the compiled `{context.code(_callee(call))}(...)` ran here"),)


def _fixes(context: RuleContext, change: InplaceChange) -> tuple[Fix, ...]:
    """A clone passed at the compiled call, or the change made out of place."""
    offered = at_change(context, change)
    cloned = clone_at_compiled_call(context, change)
    if cloned is not None:
        offered.insert(0, cloned)
    return tuple(sorted(offered, key=lambda fix: fix.applicability is not Applicability.SAFE))
