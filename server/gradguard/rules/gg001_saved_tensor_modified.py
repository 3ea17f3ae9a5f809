"""An in-place change of a tensor that an earlier op saved for backward.

## What it does
Finds in-place changes (`+=` and every augmented assignment, `x.add_()` and every `*_` method,
index assignments `x[i] = v`, `inplace=True` modules and functionals, `optimizer.step()`) of a
tensor that an earlier op saved for its backward pass — or of any tensor that shares its
version counter: a view, a `detach()`, a `contiguous()` that returned its input.

## Why is this bad?
Autograd saves, for each op, the tensors its backward formula needs, together with their
version counter. Every in-place op bumps that counter for the tensor and all its aliases.
When `backward()` reaches the op, it finds the version changed and raises
`RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation`
— long after the mistake, naming no line: the message of every GG001 finding quotes these words,
so that searching for the traceback finds this rule. Which tensors are saved follows
`derivatives.yaml`, not folklore: `sigmoid`, `tanh`, `exp`, `relu` and `softmax` save their
output; `pow`, `mul` (when the other operand requires grad), `Linear` (when its weight requires
grad), convolution and batch norm save their input; `add`, `sum` and dropout save neither.

A change is reported only when a later backward pass may run into the save it met. In a
function that no analysed code calls (a trainer's step, an agent's update), that pass may come
after it returns, through what escapes it: what it returns or yields, what it stores on `self`,
on an argument (`log_probs.append(dist.log_prob(a))`) or in a global, and what it hands to a
call the analysis does not follow. When nothing that can reach the save escapes, its graph dies
with the function and nothing is reported: a graph kept by `retain_graph=True` that nothing
backwards again, a target network's forward used only through `.detach()` before the soft update
of its weights, a held-out loss computed with grad on and logged with `.item()` before
`optimizer.step()`. `gradguard explain FILE:LINE` says which applies to a change.

Under `torch.autocast`, the ops of autocast's lower-precision list (linear layers, convolutions,
matrix products) cast their fp32 inputs and save the copies: a parameter they used may then be
changed in place (`scaler.step(optimizer)`, which runs `optimizer.step()`) without breaking
backward, and a change of another input they saved is a warning, since it breaks backward only
if that input was already in the lower precision. What an op saves of its output is unaffected.
An output of those ops is in the lower precision, and so is what `relu`, `sigmoid`, `tanh`,
dropout or a view make of it: its `.float()` (or `.to(torch.float32)`) is a copy, which may be
changed in place; elsewhere `.float()` may return the tensor itself. `autocast(enabled=False)`
inside a region runs in full precision again.
`torch.utils.checkpoint.checkpoint(fn, x)` keeps none of `fn`'s saves (backward runs `fn` again)
but saves `x`: changing `x` in place before backward raises, changing the output does not.

## Example
```python
y = torch.sigmoid(x)
y.mul_(2)            # GG001: sigmoid saved y for backward
y.sum().backward()
```

Use instead:
```python
y = torch.sigmoid(x)
y = y.mul(2)
y.sum().backward()
```

## Fix safety
Rewriting the in-place op out of place (`y = y * 2`) is safe when nothing else refers to the
changed tensor; when a view or alias of it is still used, the rewrite changes what that alias
sees, so cloning the tensor where it was saved is offered instead. A parameter the function
never rebinds is the caller's tensor (a forward hook's `output`): the rewrite would leave it
unchanged for the caller, so it is unsafe; nor is a clone at the save offered when the change
runs inside the saving call (a hook of the module whose output was saved).

For an `optimizer.step()` that changes weights a later `backward()` still needs (a GAN's
discriminator step before the generator's backward), every fix is unsafe, because it changes
what is trained: passing `fake.detach()` to the other model after the step when `fake` is the
stepped model's output (that backward then stops there, as `D(fake.detach())` does in GAN loops),
computing the forward again after the step (the generator then trains against the updated
discriminator), or stepping after that backward (the step then also applies the gradients that
backward accumulated). See docs/fixes.md.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from gradguard import SAVED_TENSOR_ERROR
from gradguard.analysis.events import InplaceChange
from gradguard.analysis.values import UNKNOWN_INDEX_VIEW, SavedRecord, Tri
from gradguard.findings import Applicability, Edit, Finding, Fix, Severity
from gradguard.fixes.edits import (
    callers_tensor,
    clone_before,
    clone_result,
    detach_where_passed,
    drop_inplace_argument,
    move_after,
    out_of_place_augmented,
    out_of_place_method,
    rebinds,
    recompute_after,
    statement_holding,
)
from gradguard.knowledge import surface
from gradguard.rules.base import NotReported, RuleContext, assumption, standalone
from gradguard.rules.compiled_reads import Read, inductor_read
from gradguard.rules.gg002_leaf_modified import raises_for_leaf
from gradguard.rules.gg003_multi_output_view_modified import raises_for_view

CODE = "GG001"
NAME = "saved-tensor-modified-inplace"


def check(context: RuleContext) -> Iterator[Finding]:
    # a change reached along several paths (a function called from many places) is one finding:
    # its most certain report, chosen before any position is looked up
    chosen: dict[cst.CSTNode, tuple[InplaceChange, SavedRecord, list[str]]] = {}
    for change in context.changes:
        if dropped(change) is not None:
            continue
        record = next((r for r in change.saved if r.certain), change.saved[0])
        reasons = _doubts(change, record)
        known = chosen.get(change.node)
        if known is None or (known[2] and not reasons):
            chosen[change.node] = (change, record, reasons)
    for change, record, reasons in chosen.values():
        yield _finding(context, change, record, reasons)


def dropped(change: InplaceChange) -> NotReported | None:
    """Why this rule does not report `change` (None: it does)."""
    reason = unreported(change)
    if reason is None and compiled_silently(change):
        return NotReported.SILENT_WHEN_COMPILED
    return reason


def compiled_silently(change: InplaceChange) -> bool:
    """Whether every save the change meets was made inside a region compiled by inductor, as an
    input its backward reads through a view, unchecked, the change itself being outside the region:
    no error, a wrong gradient (GG005)."""
    return change.compiled is None and bool(change.saved) and all(map(_unchecked, change.saved))


def _unchecked(record: SavedRecord) -> bool:
    """Whether a compiled backward reads the save without checking its version (`compiled_reads`)."""
    return record.compiled is not None and record.compiled.backend not in surface.VERSION_CHECKED_BACKENDS \
        and inductor_read(record) is Read.UNCHECKED


def unreported(change: InplaceChange) -> NotReported | None:
    """Why a change of a saved tensor breaks no backward pass (None: it breaks one, raising or not)."""
    if change.detaches:
        return NotReported.DETACHES
    if not change.bumps_version:
        return NotReported.THROUGH_DATA
    if not change.saved:
        return NotReported.NOTHING_SAVED if change.freed_by is None else NotReported.FREED_BY_BACKWARD
    if change.backward_follows is Tri.NO:
        return NotReported.NO_BACKWARD if change.dies_in is None else NotReported.GRAPH_DIES
    if raises_for_leaf(change):
        return NotReported.LEAF_ERROR_FIRST
    if raises_for_view(change) or change.refused_nearby:
        return NotReported.VIEW_ERROR_FIRST
    return None


def _doubts(change: InplaceChange, record: SavedRecord) -> list[str]:
    """Why the change may not break backward after all (none: it will)."""
    reasons = []
    if record.cast and record.aten_op.split(".", 1)[0] in surface.AUTOCAST_LOWER_PRECISION:
        reasons.append("under autocast it was saved only if already in the lower precision; a cast copy otherwise")
    elif record.cast:
        reasons.append("under autocast the op may have cast it, saving a copy in another precision")
    elif not record.certain:
        reasons.append("whether it was saved depends on which tensors require grad here")
    if change.target.origin.description == UNKNOWN_INDEX_VIEW:
        reasons.append("the changed tensor is part of it only if its index is an int or a slice, not a tensor "
                       "of several indices, and the analysis does not know the index")
    elif not change.target.alias_certain:
        reasons.append("the changed tensor may be an alias of it (e.g. `contiguous()`/`to()` return their "
                       "input when nothing needs to change)")
    if change.target.maybe_other:
        reasons.append("on another path it holds a number, None or a value not followed instead")
    if change.backward_follows is Tri.MAYBE and change.backward_statement is not None:
        reasons.append("the backward pass reaches it only through a call the analysis did not follow")
    elif change.backward_follows is not Tri.YES:
        reasons.append("this holds if a backward pass later runs through it")
    if change.assumes is not None:
        reasons.append(assumption(change))
    if change.standalone_of is not None and reasons and change.assumes is None:
        reasons.append(standalone(change))
    return reasons


def _finding(context: RuleContext, change: InplaceChange, record: SavedRecord, reasons: list[str]) -> Finding:
    saved = f"the {record.what} of `{record.saved_by}` ({context.where(record.node, record.file, record.scope)})"
    if isinstance(record.run_by, cst.Call):
        ran = context.where(record.run_by, record.file, record.scope)
        saved += f" that `{context.code(record.run_by.func)}(...)` ran ({ran})"
    why = f"which `{record.saved_by}` saves for backward" if isinstance(record.run_by, cst.Call) else \
        "which it saves for backward"
    outcome = f'so `backward()` will raise "{SAVED_TENSOR_ERROR}"' if not reasons else \
        f'so `backward()` may raise "{SAVED_TENSOR_ERROR}" (' + "; ".join(reasons) + ")"
    outcome += _when_compiled(change, record)
    if change.target_node is not None:
        message = f"`{context.code(change.target_node)}` is {saved}, {why}; {change.verb} changes it in place, {outcome}."
    else:
        message = f"{change.verb} changes {saved} in place, {why}, {outcome}."
    return Finding(
        code=CODE,
        severity=Severity.WARNING if reasons else Severity.ERROR,
        message=message,
        filename=context.document.filename,
        span=context.document.span(change.node, change.scope),
        related=context.saved_here(record) + context.called_from(change)
        + context.at_backward(change, "raises here: its graph still needs what was changed"),
        fixes=fixes(context, change, record),
        aten_op=record.aten_op,
    )


def _when_compiled(change: InplaceChange, record: SavedRecord) -> str:
    """What a compiled region the change or the save ran in does instead (nothing to add: eager)."""
    if change.compiled is not None and change.compiled.backend in surface.TRACING_BACKENDS \
            and record.compiled is not None:
        return (f"; compiled (`torch.compile`, backend \"{change.compiled.backend}\"), the program raises at the "
                "region's first call instead, wrapped in `BackendCompilerFailed`")
    if change.compiled is not None or record.compiled is None:
        return ""
    backend = record.compiled.backend
    made = f" (the save was made inside code compiled by `torch.compile` with backend \"{backend}\""
    if backend in surface.VERSION_CHECKED_BACKENDS:
        return f"{made}, which checks saved tensors as eager does)"
    read = inductor_read(record)
    if read is Read.MASKED:
        return f"{made}: compiled, `backward()` raises nothing: it reads a mask of this output, made before the change)"
    if read is Read.BY_RANK:
        return (f"{made}: with a transposed operand, its compiled backward checks this save when both operands are "
                "matrices (2-D), raising from inside its generated code; for batches of matrices it raises nothing "
                "and computes the gradients from the changed value, pytorch#197887)")
    return f"{made}: its compiled backward checks this save, and raises from inside its generated code)"


def fixes(context: RuleContext, change: InplaceChange, record: SavedRecord) -> tuple[Fix, ...]:
    """Out of place at the change (safe when nothing else shares the tensor), or clone at the save."""
    offered = at_change(context, change)
    during = {id(node) for node in change.call_chain}  # a forward hook the saving call ran changed its output
    cloned = None if any(id(r.node) in during for r in change.saved) else \
        clone_at_saves(context, change.saved) or clone_at_compiled_call(context, change)
    if cloned is not None:
        offered.append(cloned)
    if change.verb.endswith(".step()`") and change.statement is not None and change.backward_statement is not None:
        offered += _step_fixes(context, change, record)
    return tuple(sorted(offered, key=lambda fix: fix.applicability is not Applicability.SAFE))


def at_change(context: RuleContext, change: InplaceChange) -> list[Fix]:
    """The change made out of place (`inplace=True` dropped, `y = y.mul(2)`), or on a clone."""
    document = context.document
    applicability = Applicability.UNSAFE if change.aliases or callers_tensor(change.scope, change.target_node) \
        else Applicability.SAFE
    offered: list[Fix] = []
    inplace_call = change.inside_module if change.inside_module is not None else change.node
    dropped = drop_inplace_argument(document, inplace_call) if context.in_this_file(inplace_call) else None
    if dropped is not None:
        offered.append(Fix("Remove `inplace=True`", applicability, dropped))
    elif change.statement is not None and change.grad_enabled is Tri.YES and (  # under no_grad, out of place drops grad
            not isinstance(change.target_node, cst.Name) or rebinds(change.scope, change.target_node.value)):
        rewrite = (out_of_place_augmented(document, change.statement)
                   or out_of_place_method(document, change.statement, change.target_node))
        if rewrite is not None:
            offered.append(Fix(f"Rewrite out of place: `{rewrite[0].content}`", applicability, rewrite))
        elif isinstance(change.target_node, cst.Name) and not _holds_a_save(change.statement, change.saved):
            name = change.target_node.value
            offered.append(Fix(f"Clone `{name}` before changing it", applicability,
                               clone_before(document, change.statement, name)))
    return offered


def clone_at_compiled_call(context: RuleContext, change: InplaceChange) -> Fix | None:
    """A clone of the changed tensor passed, by its name, to the call (in this file) that ran the compiled
    region saving it: the region saves the clone, which nothing changes."""
    region = change.saved[0].compiled if change.saved else None
    call = region.call if region is not None else None
    if not isinstance(call, cst.Call) or not context.in_this_file(call) or change.target_node is None:
        return None
    changed = change.target_node
    while isinstance(changed, (cst.Subscript, cst.Attribute)):  # `x[0].zero_()`: a view of the argument `x`
        changed = changed.value
    passed = next((arg.value for arg in call.args if not arg.star and isinstance(arg.value, cst.Name)
                   and isinstance(changed, cst.Name) and arg.value.value == changed.value), None)
    if passed is None:
        return None
    return Fix(f"Pass `{context.code(passed)}.clone()` to the compiled call", Applicability.SAFE,
               clone_result(context.document, passed))


def _holds_a_save(statement: cst.CSTNode, records: tuple[SavedRecord, ...]) -> bool:
    """Whether `statement` itself saved one of the tensors (`hs[t + 1] = cell(x[t], hs[t])`): a clone
    before it would be saved, and changed, in its place."""
    saves = {id(record.node) for record in records}
    pending = [statement]
    while pending:
        node = pending.pop()
        if id(node) in saves:
            return True
        pending.extend(node.children)
    return False


def _step_fixes(context: RuleContext, change: InplaceChange, record: SavedRecord) -> list[Fix]:
    """`optimizer.step()` before a backward pass through the old weights: run the forward again
    after the step (what GAN loops do), or step after that backward. Both change what is trained,
    so both are unsafe (docs/fixes.md)."""
    document, step = context.document, change.statement
    offered = []
    held = statement_holding(document, record.run_by) if record.run_by is not None and \
        context.in_this_file(record.run_by) else None
    if held is not None and held[0] is not step and held[1] is statement_holding(document, step.body[0])[1]:
        detached = detach_where_passed(document, held[1], held[0], step, change.backward_statement)
        if detached is not None:
            output = context.code(held[0].body[0].targets[0].target)
            offered.append(Fix(f"Pass `{output}.detach()` after `{context.code(step.body[0])}`, so that "
                               f"`{context.code(change.backward_statement.body[0])}` stops at `{output}` "
                               f"instead of reaching the old weights", Applicability.UNSAFE, detached))
        recomputed = recompute_after(document, held[1], held[0], step, change.backward_statement)
        if recomputed is not None:
            forward = context.code(held[0].body[0])
            offered.append(Fix(f"Compute `{forward}` after `{context.code(step.body[0])}`, with the updated weights",
                               Applicability.UNSAFE, recomputed))
    moved = move_after(document, step, change.backward_statement)
    if moved is not None:
        offered.append(Fix("Step the optimizer after the backward pass that still needs these weights",
                           Applicability.UNSAFE, moved))
    return offered


def clone_at_saves(context: RuleContext, records: tuple[SavedRecord, ...]) -> Fix | None:
    """Clone wherever an op saved the tensor (every one of them), so the change never reaches backward."""
    edits: dict[int, tuple[Edit, ...]] = {}
    for record in records:
        saved = _saved_expression(context, record)
        if saved is None:
            return None
        edits.setdefault(id(saved), clone_result(context.document, saved))
    if not edits:
        return None
    first = records[0]
    message = (f"Clone the output of `{first.saved_by}` where it is saved" if first.what == "output"
               else f"Pass a clone to `{first.saved_by}`")
    return Fix(message, Applicability.SAFE, tuple(e for group in edits.values() for e in group))


def _saved_expression(context: RuleContext, record: SavedRecord) -> cst.BaseExpression | None:
    """The expression whose value the op saved, when the user's code spells it out."""
    node = record.node
    if not record.at_call or not context.in_this_file(node) or record.aten_op.endswith("_"):
        return None
    if record.what == "output" and isinstance(node, (cst.Call, cst.BinaryOperation)):
        return node
    if record.what == "input" and isinstance(node, cst.Call):
        receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if isinstance(receiver, cst.Name) and context.import_name(receiver.value) is None \
                and receiver.value not in ("self", "torch", "F"):
            return receiver
        if len(positional) == 1:
            return positional[0]
    if record.what == "recurrent state" and isinstance(node, cst.Call):
        given = [arg.value for arg in node.args if arg.keyword is None and not arg.star][1:2] or \
            [arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "hx"]
        if given and not isinstance(given[0], cst.Tuple):  # `(h, c)`: which of the two was saved is not said
            return given[0]
    return None
