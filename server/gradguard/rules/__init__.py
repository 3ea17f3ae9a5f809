"""The rules: one module each, its docstring is its documentation."""

from __future__ import annotations

from gradguard.rules import (
    gg000_unparsable,
    gg001_saved_tensor_modified,
    gg002_leaf_modified,
    gg003_multi_output_view_modified,
    gg004_data_bypasses_version,
    gg005_compiled_input_modified,
    gg100_unused_noqa,
)
from gradguard.rules.base import Rule, RuleContext

RULES: tuple[Rule, ...] = tuple(Rule.from_module(m) for m in (
    gg000_unparsable,
    gg001_saved_tensor_modified,
    gg002_leaf_modified,
    gg003_multi_output_view_modified,
    gg004_data_bypasses_version,
    gg005_compiled_input_modified,
    gg100_unused_noqa,  # last: it reads what the others found
))

RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}

__all__ = ["RULES", "RULES_BY_CODE", "Rule", "RuleContext"]
