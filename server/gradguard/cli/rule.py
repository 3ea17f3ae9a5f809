"""`gradguard rule CODE` / `gradguard rule --all`: a rule's documentation, offline, from its
docstring (the same text as docs/rules/), as `ruff rule` prints it; `gradguard verify`'s own codes
(GV001...) are documented the same way."""

from __future__ import annotations

import argparse
import json
import sys

from gradguard.rule_docs import RuleDoc, rule_docs, verify_docs


def rule_to_json(rule: RuleDoc) -> dict:
    return {"code": rule.code, "name": rule.name, "summary": rule.summary, "documentation": rule.documentation,
            "url": rule.url}


def run_rule(args: argparse.Namespace) -> int:
    """Exit 0, or 2 for an unknown code or no code at all."""
    docs = {doc.code: doc for doc in [*rule_docs(), *verify_docs()]}
    if args.all:
        rules = list(docs.values())
    elif args.code is None:
        print("gradguard: name a rule (gradguard rule GG001) or pass --all", file=sys.stderr)
        return 2
    elif (rule := docs.get(args.code.upper())) is None:
        print(f"gradguard: unknown rule code {args.code!r} (known codes: {', '.join(docs)})", file=sys.stderr)
        return 2
    else:
        rules = [rule]
    if args.format == "json":
        data = [rule_to_json(r) for r in rules]
        print(json.dumps(data if args.all else data[0], indent=2, ensure_ascii=False))
    else:
        print("\n".join(f"{r.page()}\n{r.url}\n" for r in rules), end="")
    return 0
