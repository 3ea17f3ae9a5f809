"""Hovers: a tensor's provenance as the analysis sees it, and a rule's documentation on `# noqa`."""

from __future__ import annotations

import re

from gradguard.analysis.events import Seen
from gradguard.analysis.values import Tri
from gradguard.rules import RULES_BY_CODE
from gradguard.rules.base import RuleContext

_CODE = re.compile(r"\bGG\d{3}\b", re.IGNORECASE)
_REQUIRES_GRAD = {Tri.YES: "requires grad", Tri.NO: "does not require grad", Tri.MAYBE: "may require grad"}


def rule_hover(line: str, column: int) -> str | None:
    """The documentation of the rule whose code in a `# noqa` comment is under `column`."""
    for match in _CODE.finditer(line):
        rule = RULES_BY_CODE.get(match.group(0).upper())
        if rule is not None and "noqa" in line[:match.start()].lower() and match.start() <= column <= match.end():
            return f"**{rule.code} {rule.name}**\n\n{rule.documentation}"
    return None


def tensor_hover(context: RuleContext, name: str, seen: Seen) -> str:
    """A few lines on the tensor `name` holds here: where it came from, whether it requires grad,
    which ops saved it for backward, and what it is a view or an alias of."""
    tensor = seen.value
    origin = tensor.origin.description
    if origin.startswith("`"):  # a factory's name
        origin = f"made by {origin}"
    if tensor.origin.node is not None:
        origin += f" ({context.where(tensor.origin.node)})"
    kind = "a leaf" if tensor.is_leaf else "not a leaf"
    lines = [f"**`{name}`**: {origin}", "", f"- {_REQUIRES_GRAD[tensor.requires_grad]}; {kind}"]
    if tensor.is_leaf and tensor.requires_grad is Tri.YES:
        lines.append("- a leaf that requires grad: changing it in place outside `torch.no_grad()` raises")
    if tensor.view_of_leaf:
        lines.append("- a view of a leaf that requires grad: changing it in place raises")
    if tensor.multi_output_view:
        lines.append(f"- one of the views `{tensor.multi_output_view}` returns: changing it in place raises")
    if tensor.no_grad_view:
        lines.append("- a view made under `no_grad`: changing it in place with grad on raises")
    if tensor.storage_of is not None:
        lines.append("- shares its memory with another tensor but not its version counter (`.data`, "
                     "`unsafe_*`): autograd does not see changes made through it")
    if not tensor.alias_certain:
        lines.append("- may be an alias of the tensor it was made from (`contiguous()`, `to()` return their "
                     "input when nothing needs to change)")
    for record in seen.saved:
        maybe = "" if record.certain else " (if the tensors it got require grad)"
        lines.append(f"- saved for backward{maybe}: its {record.what} by `{record.saved_by}` "
                     f"({context.where(record.node)}); an in-place change before that backward raises")
    if len(lines) == 3 and tensor.requires_grad is not Tri.NO:
        lines.append("- nothing has saved it for backward here: changing it in place here leaves backward intact")
    return "\n".join(lines)
