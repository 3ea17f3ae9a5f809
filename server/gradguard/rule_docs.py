"""The rules' documentation (and that of `gradguard verify`'s own codes, `verify/codes/`) read from
their modules' source (docstring, `CODE`, `NAME`) without importing them: `gradguard rule` answers
in the time an interpreter starts, not the 0.3 s the analysis takes to import.
`tests/test_rules_registry.py` checks it says what `gradguard.rules` says.
"""

from __future__ import annotations

import ast
from collections import namedtuple
from pathlib import Path

from gradguard import rule_url

RULES_FOLDER = Path(__file__).with_name("rules")
VERIFY_CODES_FOLDER = Path(__file__).parent / "verify" / "codes"


def rule_page(code: str, name: str, documentation: str) -> str:
    """A rule's documentation as a Markdown page: a title, then the docstring as written."""
    body = "\n".join(line.rstrip() for line in documentation.strip().splitlines())
    return f"# {code} — {name}\n\n{body}\n"


class RuleDoc(namedtuple("RuleDoc", "code name summary documentation url")):
    """What a rule module says of itself (a named tuple: `gradguard rule` need not import dataclasses)."""

    def page(self) -> str:
        return rule_page(self.code, self.name, self.documentation)


def _docs(folder: Path, pattern: str) -> list[RuleDoc]:
    """The documentation of the code modules in `folder` whose names match `pattern`, by code."""
    docs = []
    for module in sorted(folder.glob(pattern)):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        constants = {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                     and isinstance(node.value, ast.Constant) for target in node.targets if isinstance(target, ast.Name)}
        documentation = (ast.get_docstring(tree, clean=False) or "").strip()
        summary = documentation.splitlines()[0] if documentation else ""
        docs.append(RuleDoc(constants["CODE"], constants["NAME"], summary, documentation, rule_url(constants["CODE"])))
    return sorted(docs, key=lambda doc: doc.code)


def rule_docs() -> list[RuleDoc]:
    """Every rule's documentation, by code."""
    return _docs(RULES_FOLDER, "gg[0-9][0-9][0-9]_*.py")


def verify_docs() -> list[RuleDoc]:
    """The documentation of the codes only `gradguard verify` reports (GV001...), by code."""
    return _docs(VERIFY_CODES_FOLDER, "gv[0-9][0-9][0-9]_*.py")
