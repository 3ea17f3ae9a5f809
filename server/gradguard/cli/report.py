"""What `gradguard check` prints, as Ruff prints it: the findings in the chosen format on stdout
(or `--output-file`), then, for the text formats, a summary there too in Ruff's words: "Found 3
problems.", how many `--fix` would fix and how many hidden fixes `--unsafe-fixes` would add, or
"All checks passed!" (the machine formats keep their stream pure). Standard input fixed or diffed
puts its source on stdout, so its findings and summary go to stderr. `--statistics` counts by rule
(text, or JSON with `--output-format json`), `--show-fixes` lists what was fixed. `--quiet` keeps
only the findings, `--silent` prints nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field

from gradguard.cli.output import MACHINE_RENDERERS
from gradguard.cli.text import cell_key, Style, has_safe_fix, render_concise, render_full, use_colour
from gradguard.findings import Finding

TYPE_CHECKING = False  # typing is not imported for annotations: a run the cache answers never needs it
if TYPE_CHECKING:
    from gradguard.source.notebook import Notebook
    from typing import IO


@dataclass
class CheckRun:
    """What a `check` run found, fixed and failed on, and the texts it read (for the snippets)."""

    findings: list[Finding] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # internal errors
    unwritten: list[str] = field(default_factory=list)  # files whose fixes could not be written
    fixed: dict[str, Counter[str]] = field(default_factory=dict)  # per file: the codes fixed
    diffs: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    fixed_text: str | None = None  # standard input, fixed

    def add_cells(self, filename: str, notebook: Notebook) -> None:
        """A notebook's cells, for the snippets of its findings."""
        self.sources.update((cell_key(filename, cell.number), cell.source) for cell in notebook.cells)

    @property
    def fixed_count(self) -> int:
        return sum(sum(codes.values()) for codes in self.fixed.values())


TEXT_RENDERERS = {"full": render_full, "concise": render_concise}
FORMATS = sorted([*TEXT_RENDERERS, *MACHINE_RENDERERS])


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _hidden(findings: list[Finding], unsafe: bool) -> int:
    """Findings whose only fixes are unsafe, when unsafe fixes are off."""
    return 0 if unsafe else sum(1 for f in findings if f.fixes and not has_safe_fix(f))


def _hidden_note(count: int) -> str:
    return f"{plural(count, 'hidden fix')} can be enabled with the `--unsafe-fixes` option" if count else ""


def summary(findings: list[Finding], fixed: int, fix: str | None, unsafe: bool, failed: int = 0) -> list[str]:
    """The closing lines of a text-format run (`failed`: files an internal error left unanalysed)."""
    unanalysed = [f"{plural(failed, 'file')} could not be analysed (an internal error, above)."] if failed else []
    return _summary(findings, fixed, fix, unsafe, bool(failed)) + unanalysed


def _summary(findings: list[Finding], fixed: int, fix: str | None, unsafe: bool, failed: bool) -> list[str]:
    hidden = _hidden(findings, unsafe)
    if fix == "diff":
        note = f" ({_hidden_note(hidden)})" if hidden else ""
        return [f"Would fix {plural(fixed, 'problem')}{note}."]
    if not findings and not fixed:
        return ["No problems found in the files analysed."] if failed else ["All checks passed!"]
    if fix == "write":
        lines = [f"Found {plural(fixed + len(findings), 'problem')} ({fixed} fixed, {len(findings)} remaining)."]
        if hidden:
            lines.append(f"No fixes available ({_hidden_note(hidden)}).")
        return lines
    lines = [f"Found {plural(len(findings), 'problem')}."]
    fixable = sum(1 for f in findings if has_safe_fix(f) or (unsafe and f.fixes))
    if fixable:
        note = f" ({_hidden_note(hidden)})" if hidden else ""
        lines.append(f"[*] {fixable} fixable with the `--fix` option{note}.")
    elif hidden:
        lines.append(f"No fixes available ({_hidden_note(hidden)}).")
    return lines


def _counts(findings: list[Finding]) -> list[tuple[str, int, int]]:
    """(code, findings, findings with a safe fix) per rule, the most frequent first."""
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if has_safe_fix(f))
    return [(code, n, fixable[code]) for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def statistics(findings: list[Finding]) -> list[str]:
    """`count<TAB>code<TAB>[*] name`, the most frequent first (`[*]`: some have a safe fix)."""
    counts = _counts(findings)
    width = len(str(max((n for _, n, _ in counts), default=0)))
    return [f"{str(n).rjust(width)}\t{code}\t{'[*]' if fixable else '[ ]'} {_name(code)}"
            for code, n, fixable in counts]


def statistics_json(findings: list[Finding]) -> str:
    """`--statistics --output-format json`: Ruff's shape, `fixable` true when every finding of the
    rule has a safe fix."""
    return json.dumps([{"code": code, "name": _name(code), "count": n, "fixable": fixable == n,
                        "fixable_count": fixable} for code, n, fixable in _counts(findings)], indent=2)


STATISTICS_FORMATS = ("concise", "full", "json")


def _name(code: str) -> str:
    from gradguard.rules import RULES_BY_CODE  # imported only when a name is printed

    rule = RULES_BY_CODE.get(code)
    return rule.name if rule is not None else ""


def fixes_applied(fixed: dict[str, Counter[str]]) -> list[str]:
    """`--show-fixes`: per file, how many findings of each code were fixed."""
    if not fixed:
        return []
    lines = [f"Fixed {plural(sum(sum(c.values()) for c in fixed.values()), 'problem')}:"]
    for filename, codes in sorted(fixed.items()):
        lines.append(f"- {filename}:")
        lines += [f"    {n} × {code} ({_name(code)})" for code, n in sorted(codes.items())]
    return lines


def print_problems(run: CheckRun) -> None:
    """Internal errors and files that could not be written, on stderr."""
    for failure in run.failures:
        print(f"gradguard: internal error in {failure}", file=sys.stderr)
    for unwritten in run.unwritten:
        print(f"gradguard: {unwritten}", file=sys.stderr)


def print_run(run: CheckRun, args: argparse.Namespace, fix: str | None, stdin: bool, out: IO[str]) -> None:
    """Everything a run prints, by `args`' format and verbosity, to `out` (stdout or
    `--output-file`); standard input fixed or diffed prints its source on stdout and the rest on stderr."""
    if args.silent:
        if stdin and fix == "write" and run.fixed_text is not None:
            sys.stdout.write(run.fixed_text)
        return
    stream = sys.stderr if stdin and fix is not None else out
    if fix == "diff":
        (sys.stdout if stdin else out).write("".join(run.diffs))
    elif stdin and fix == "write" and run.fixed_text is not None:
        sys.stdout.write(run.fixed_text)
        _print_findings(run, args, stream)
    elif args.statistics:
        _print_statistics(run, args, out)
    else:
        _print_findings(run, args, out)
    print_problems(run)
    if args.quiet or args.format not in TEXT_RENDERERS:
        return
    if args.format == "full" and run.findings and fix != "diff" and not args.statistics:
        print(file=stream)  # as Ruff's: a blank line closes the last finding's block
    if args.show_fixes:
        for line in fixes_applied(run.fixed):
            print(line, file=stream)
    for line in summary(run.findings, run.fixed_count, fix, args.unsafe_fixes, len(run.failures)):
        print(line, file=stream)


def _print_statistics(run: CheckRun, args: argparse.Namespace, out: IO[str]) -> None:
    if args.format == "json":
        print(statistics_json(run.findings), file=out)
    elif lines := statistics(run.findings):
        print("\n".join(lines), file=out)


def _print_findings(run: CheckRun, args: argparse.Namespace, stream: IO[str]) -> None:
    if args.format in TEXT_RENDERERS:
        output = TEXT_RENDERERS[args.format](run.findings, run.sources, Style(use_colour(stream)))
    else:
        output = MACHINE_RENDERERS[args.format](run.findings)
    if output:
        print(output, file=stream)


def print_watched(run: CheckRun, args: argparse.Namespace) -> None:
    """One run of `--watch`, as Ruff's watch mode prints it: a timestamped count, then the findings."""
    from gradguard.cli.watch import notify

    if args.silent:
        return
    notify(f"Found {plural(len(run.findings), 'problem')}. Watching for file changes.")
    if run.findings:
        print()
        _print_findings(run, args, sys.stdout)
    print_problems(run)
    sys.stdout.flush()
