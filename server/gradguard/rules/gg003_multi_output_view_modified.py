"""An in-place change of a multi-output view op's output, a no_grad view or a custom Function's view.

## What it does
Finds in-place changes of a tensor returned by `unbind`, `split`, `chunk` (and of the rows a
`for row in x` or `a, b = x` gives, which call `unbind`) or of a view of one
(`q.reshape(...).permute(...)`), and of a view created inside `torch.no_grad()` /
`inference_mode()` that is changed once grad is back on, and of an output of a custom
`torch.autograd.Function` that is one of its inputs or a view of one (a gradient reversal
layer's `return x.view_as(x)`), or a view of such an output, and of the output of a module with
a full backward hook (`register_full_backward_hook`, a Grad-CAM tool's) that an `inplace=True`
activation changes. Also finds `detach_()` on a view, and a value that requires grad written into
one output of a multi-output view op of a tensor that requires none (`a, b = batch.chunk(2)`,
then `a *= temperature`, a parameter), or into a view of one made under `torch.no_grad()` (a
static KV cache whose per-layer rows an `@torch.no_grad()` `__init__` made, written with the
keys of a training step).

## Why is this bad?
These views share their base's storage, and autograd cannot rewrite the backward of an op that
returned several views at once. PyTorch raises at once: `RuntimeError: Output 0 of
Unbind is a view and is being modified inplace. This view is the output of a function
that returns multiple views. ...` or `A view was created in no_grad mode and is being modified
inplace with grad mode enabled` (also for an output of `chunk` of a tensor that requires no
grad, given a value that does). A custom Function's backward would be overridden by the
view+inplace logic, so PyTorch raises `Output 0 of GradReverse is a view and is being modified
inplace. This view was created inside a custom Function ...` (return a clone instead); a fully
backward-hooked module's outputs are views of its `BackwardHookFunction` (`Output 0 of
BackwardHookFunction is a view ...`): change them out of place. For a view
of a multi-output view torch names the later view op (`Output 0 of Permute is a view ...`). A view
cannot be detached in place: `Can't detach views in-place. Use detach() instead` (`x = x.detach()`).
`tensor_split`, `hsplit` and friends return plain slices: they are fine.
Inside code compiled by `torch.compile` (any backend) the program raises at the region's first
call instead, as dynamo traces it: `torch._dynamo.exc.TorchRuntimeError: RuntimeError when
making fake tensor call`, whose explanation quotes this error.

## Example
```python
q, k = proj(x).chunk(2, dim=-1)
q *= 0.5              # GG003
```

Use instead:
```python
q, k = proj(x).chunk(2, dim=-1)
q = q * 0.5
```

## Fix safety
The out-of-place rewrite gives the same values to every later use of the name; `clone()` first
does too. Both are safe unless another alias of the base is read afterwards, or the name is a
parameter the function never rebinds (the caller's tensor, which the rewrite leaves unchanged).
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from gradguard.analysis.events import InplaceChange
from gradguard.analysis.module_calls import BACKWARD_HOOK_FUNCTION
from gradguard.analysis.values import TensorValue, Tri
from gradguard.findings import Applicability, Finding, Fix
from gradguard.fixes.edits import callers_tensor, out_of_place_augmented, out_of_place_method, rebinds
from gradguard.rules.base import NotReported, RuleContext

CODE = "GG003"
NAME = "multi-output-view-modified-inplace"


def dropped(change: InplaceChange) -> NotReported | None:
    """Why this rule does not report `change` (None: it does)."""
    target = change.target
    if change.detaches:  # torch refuses it on any view, whatever the grad mode (`.contiguous()` may be a copy)
        return None if target.alias_certain else NotReported.MAYBE_A_COPY
    if not change.bumps_version:
        return NotReported.THROUGH_DATA
    if change.grad_enabled is Tri.NO:
        return NotReported.GRAD_OFF
    if target.requires_grad is Tri.NO and (change.writes_grad is Tri.NO if target.multi_output_view is not None
                                           else not target.no_grad_view or change.writes_grad is not Tri.YES):
        # one output of `chunk` of such a tensor may not take a value that does, nor may a view of it made
        # under no_grad (a static cache's rows; what an argument of unknown type holds: not reported)
        return NotReported.REQUIRES_NO_GRAD
    if target.multi_output_view is None and not target.no_grad_view and target.function_view is None:
        return NotReported.NOT_SUCH_VIEW
    return None


def raises_for_view(change: InplaceChange) -> bool:
    """Whether PyTorch raises a view error here (before any saved-tensor check)."""
    return dropped(change) is None


def mark_refused_nearby(changes: list[InplaceChange]) -> None:
    """Mark the changes (`refused_nearby`) made where another of the same entry point's analysis
    raises a view error: the same statement, an earlier pass (a static cache's first write)."""
    refused = {(id(c.node), c.scopes[:1]) for c in changes if raises_for_view(c)}
    for change in changes:
        change.refused_nearby = (id(change.node), change.scopes[:1]) in refused


def _certain(change: InplaceChange) -> bool:
    """Whether PyTorch raises its view error whenever `change` (which `raises_for_view`) runs."""
    target = change.target
    if target.maybe_other:
        return False
    if change.detaches:
        return True
    if target.requires_grad is Tri.NO:
        return change.grad_enabled is Tri.YES and change.writes_grad is Tri.YES \
            and (target.multi_output_view is not None or target.alias_certain)
    certain = change.grad_enabled is Tri.YES and target.requires_grad is Tri.YES
    if target.multi_output_view is None and (target.function_view is None or target.no_grad_view):
        return certain and target.alias_certain  # `reshape` under no_grad: a view, or a copy
    return certain


def raises_surely(change: InplaceChange) -> bool:
    """Whether PyTorch raises a view error whenever the change runs."""
    return raises_for_view(change) and _certain(change)


def check(context: RuleContext) -> Iterator[Finding]:
    for change in context.changes:
        if not raises_for_view(change):
            continue
        target = change.target
        certain = _certain(change)
        what = context.subject(change)
        if change.detaches:
            reason = _detach_reason(what, certain)
        elif target.requires_grad is Tri.NO:
            reason = _written_grad_reason(what, change.verb, target, certain)
        elif target.multi_output_view is not None:
            reason = _multi_output_reason(what, change.verb, target, certain)
        elif target.function_view is not None and not target.no_grad_view:
            reason = _function_view_reason(what, change.verb, target.function_view,
                                           target.origin.description.startswith("the output of"), certain)
        else:
            reason = (f"{what} {'is' if target.alias_certain else 'may be'} a view created under `torch.no_grad()`; "
                      f"{change.verb} changes it in place with "
                      f"grad enabled, so PyTorch {'raises' if certain else 'may raise'} \"A view was created in "
                      f"no_grad mode and is being modified inplace with grad mode enabled\".")
        yield context.immediate_error(CODE, change, certain, reason, "the view was created here",
                                      fixes(context, change))


def _detach_reason(what: str, certain: bool) -> str:
    """Why `detach_()` on a view raises."""
    return (f"{what} is a view of another tensor, and `detach_()` cannot detach a view in place, so PyTorch "
            f"{'raises' if certain else 'may raise'} \"Can't detach views in-place. Use detach() instead...\".")


def _multi_output_reason(what: str, verb: str, target: TensorValue, certain: bool) -> str:
    """Why changing an output of a multi-output view op (`chunk`), or a view of one, raises."""
    later = target.later_view
    made_by = _made_by(later.of if later is not None else target.origin.description, target)
    if later is None:
        return (f"{what} is one of several views returned by {made_by}; {verb} changes it in place, so PyTorch "
                f"{'raises' if certain else 'may raise'} \"Output {_index(target)} of {target.multi_output_view} is a view and is "
                f"being modified inplace\".")
    subject = f"Output 0 of {later.node} is a view" if later.node is not None else "... is a view"
    return (f"{what} is a view of one of several views returned by {made_by}, restricted as they are; {verb} changes "
            f"it in place, so PyTorch {'raises' if certain else 'may raise'} \"{subject} and is being modified "
            f"inplace. This view is the output of a function that returns multiple views...\".")


def _index(target: TensorValue) -> str:
    """Which output torch's message names: `N` where the analysis does not know which one it is."""
    return "N" if target.output_index is None else str(target.output_index)


def _made_by(made: str, target: TensorValue) -> str:
    """The call that made a multi-output view, as `made` (an origin) names it, else the op's name."""
    return made.removeprefix("the view ") if made.startswith("the view `") else f"`{target.multi_output_view.lower()}`"


def _written_grad_reason(what: str, verb: str, target: TensorValue, certain: bool) -> str:
    """Why writing a value that requires grad into an output of a multi-output view op of a
    tensor that requires none (`a *= scale` after `a, b = x.chunk(2)`), or into a view of one made
    under `no_grad` (a static cache's rows), raises."""
    raises = "raises" if certain else "may raise"
    if target.multi_output_view is None:
        return (f"{what} is a view created under `torch.no_grad()` of a tensor that requires no grad; {verb} writes a "
                f"value that requires grad into it with grad enabled, so PyTorch {raises} \"A view was created in "
                f"no_grad mode and is being modified inplace with grad mode enabled\".")
    made_by = _made_by(target.origin.description, target)
    return (f"{what} is one of several views returned by {made_by} of a tensor that requires no grad; {verb} writes "
            f"a value that requires grad into it, so PyTorch {raises} \"A view was "
            f"created in no_grad mode and is being modified inplace with grad mode enabled. This view is the output "
            f"of a function that returns multiple views...\".")


def _function_view_reason(what: str, verb: str, function: str, returned: bool, certain: bool) -> str:
    """Why changing a view that the custom Function `function` returned (`returned`) or a view of one raises."""
    subject = f"Output 0 of {function} is a view" if returned else "... is a view"
    made = (f"the custom autograd Function `{function}` returned (an input, or a view)"
            if function != BACKWARD_HOOK_FUNCTION else
            f"a module with a full backward hook (`register_full_backward_hook`) handed on as a `{function}`'s output")
    return (f"{what} is a view {'that' if returned else 'of what'} {made}; {verb} changes it in place, so PyTorch {'raises' if certain else 'may raise'} "
            f"\"{subject} and is being modified inplace. This view was created inside a custom Function (or because "
            f"an input was returned as-is)...\".")


def fixes(context: RuleContext, change: InplaceChange) -> tuple[Fix, ...]:
    """The out-of-place op on the view (safe unless the base is read afterwards): `x = x.detach()` for `detach_()`."""
    if change.statement is None or (change.grad_enabled is not Tri.YES and not change.detaches) or (
            isinstance(change.target_node, cst.Name) and not rebinds(change.scope, change.target_node.value)):
        return ()
    rewrite = (out_of_place_augmented(context.document, change.statement)
               or out_of_place_method(context.document, change.statement, change.target_node))
    if rewrite is None:
        return ()
    # `detach_()` changes no value the other names (or the caller) read
    safe = not (change.aliases or callers_tensor(change.scope, change.target_node)) or change.detaches
    applicability = Applicability.SAFE if safe else Applicability.UNSAFE
    return (Fix(f"Rewrite out of place: `{rewrite[0].content}`", applicability, rewrite),)
