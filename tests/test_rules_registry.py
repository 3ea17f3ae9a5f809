"""The rule registry: one rule per code, each code `GGnnn`, each rule's module documented."""

from __future__ import annotations

import importlib
import re

from gradguard.rules import RULES


def test_rule_codes_are_distinct_and_well_formed() -> None:
    codes = [rule.code for rule in RULES]
    assert len(set(codes)) == len(codes), f"a code is used twice: {codes}"
    assert all(re.fullmatch(r"GG\d{3}", code) for code in codes), codes


def test_each_rule_module_has_a_docstring() -> None:
    for rule in RULES:
        module = importlib.import_module(rule.check.__module__)
        assert (module.__doc__ or "").strip(), f"{rule.code}: {module.__name__} has no docstring"


def test_the_documentation_read_without_importing_is_the_registrys() -> None:
    """`gradguard rule` and `known_codes()` read the rule modules' source instead of importing them."""
    from gradguard.config import known_codes
    from gradguard.rule_docs import rule_docs

    assert [(d.code, d.name, d.summary, d.documentation, d.url, d.page()) for d in rule_docs()] == [
        (r.code, r.name, r.summary, r.documentation, r.url, r.page()) for r in RULES]
    assert known_codes() == tuple(r.code for r in RULES)


def test_the_codes_verify_reports_are_documented() -> None:
    """GV001/GV002, which only `gradguard verify` reports, each have a page as the rules do."""
    from gradguard.rule_docs import verify_docs
    from gradguard.verify.protocol import INCOMPLETE, OTHER_ERROR

    docs = {doc.code: doc for doc in verify_docs()}
    assert sorted(docs) == sorted([OTHER_ERROR, INCOMPLETE]) == ["GV001", "GV002"]
    assert (docs["GV001"].name, docs["GV002"].name) == ("user-code-raised", "run-incomplete")
