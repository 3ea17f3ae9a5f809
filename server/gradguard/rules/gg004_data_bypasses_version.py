"""A change through `.data` (or `unsafe_chunk`/`unsafe_split`) of a tensor saved for backward.

## What it does
Finds in-place changes made through `x.data`, or through the outputs of `unsafe_chunk` /
`unsafe_split`, while an op has saved `x` (or a tensor sharing its storage) for backward.

## Why is this bad?
`.data` and the `unsafe_*` ops give a tensor that shares the storage but has its own version
counter. The write changes the saved values, and autograd cannot see it: there is no error at
all, and the gradients are silently wrong.

## Example
```python
y = x.sigmoid()
y.data.zero_()        # GG004: sigmoid's backward now reads zeros
y.sum().backward()
```

Use instead: change the tensor before the op that saves it, or on a `clone()`.

## Fix safety
No automatic fix: what the code meant is not clear. The message says which op saved the tensor.
"""

from __future__ import annotations

from typing import Iterator

from gradguard.analysis.events import InplaceChange
from gradguard.analysis.values import Tri
from gradguard.findings import Finding, Severity
from gradguard.rules.base import NotReported, RuleContext

CODE = "GG004"
NAME = "saved-tensor-changed-through-data"


def dropped(change: InplaceChange) -> NotReported | None:
    """Why this rule does not report `change` (None: it does)."""
    if change.detaches:
        return NotReported.DETACHES
    if change.target.storage_of is None:
        return NotReported.NOT_THROUGH_DATA
    if not change.storage_saved:
        return NotReported.NOTHING_SAVED
    if change.restored:
        return NotReported.RESTORED
    if change.backward_follows is Tri.NO:
        return NotReported.NO_BACKWARD if change.dies_in is None else NotReported.GRAPH_DIES
    return None


def check(context: RuleContext) -> Iterator[Finding]:
    for change in context.changes:
        if dropped(change) is not None:
            continue
        record = change.storage_saved[0]
        what = context.subject(change)
        message = (f"{what} shares its storage with the {record.what} of `{record.saved_by}` "
                   f"({context.where(record.node, record.file, record.scope)}), which it saved for backward, but not its "
                   f"version counter: {change.verb} changes the saved values without any error, so the gradients "
                   f"will be silently wrong. Change a `clone()` instead, or make the change before the op.")
        yield Finding(CODE, Severity.WARNING, message, context.document.filename,
                      context.document.span(change.node, change.scope),
                      context.saved_here(record) + context.called_from(change), aten_op=record.aten_op)
