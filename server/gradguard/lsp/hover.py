"""Hovers: the value a name holds as the analysis sees it, and a rule's documentation on `# noqa`."""

from __future__ import annotations

import re

import libcst as cst

from gradguard.analysis.events import Seen
from gradguard.explain import change_notes, describe_value
from gradguard.rules import RULES_BY_CODE
from gradguard.rules.base import RuleContext

_CODE = re.compile(r"\bGG\d{3}\b", re.IGNORECASE)


def rule_hover(line: str, column: int) -> str | None:
    """The documentation of the rule whose code in a `# noqa` comment is under `column`."""
    for match in _CODE.finditer(line):
        rule = RULES_BY_CODE.get(match.group(0).upper())
        if rule is not None and "noqa" in line[:match.start()].lower() and match.start() <= column <= match.end():
            return f"**{rule.code} {rule.name}**\n\n{rule.documentation}"
    return None


def value_hover(context: RuleContext, name: cst.Name, scope: dict[cst.Name, Seen]) -> str | None:
    """What the analysis believes `name` holds here (`explain.describe_value`): for a tensor, where
    it came from, whether it requires grad, its graph, which ops saved it for backward, what it is
    a view or an alias of, and whether a change of it in place there is reported (or why not); for
    any other value, what it is."""
    facts = describe_value(context, name, scope)
    if facts is None:
        return None
    notes = (*facts.notes, *change_notes(context, name))
    return "\n".join([f"**`{name.value}`**: {facts.summary}", "", *(f"- {note}" for note in notes)])
