"""Static findings and runtime findings of one file, merged: each says where it comes from.

A static finding the run confirms (same file, line and code) gets origin `both`; one on a line
the run reached without confirming it is marked "not confirmed on this input"; one on a line
the run never reached says so; a runtime finding the static analysis missed is added with
origin `runtime`.
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass, replace
from pathlib import Path

from gradguard.config import Settings
from gradguard.fixes.noqa import suppressed
from gradguard.findings import Finding, Position, Related, Severity, Span
from gradguard.source.document import Document
from gradguard.source.files import read_source
from gradguard.verify.fixes import runtime_fixes
from gradguard.verify.protocol import COMPILED, INCOMPLETE, SILENT
from gradguard.verify.runner import FileRun


@dataclass(frozen=True)
class Verified:
    """A finding after verification: `origin` static, runtime or both; the device it ran on."""

    finding: Finding
    origin: str
    device: str | None
    traceback: str | None = None


def _span(site: dict) -> Span:
    return Span(Position(site["line"], site["column"]), Position(site["line"], site["end_column"]))


def runtime_findings(run: FileRun, shown_path: str) -> list[tuple[Finding, str | None]]:
    """The run's findings (one per file, line and code) with their tracebacks; the file's path as
    the user gave it replaces its absolute form."""
    absolute = os.path.abspath(shown_path)

    def shown(filename: str) -> str:
        return shown_path if not filename or filename == absolute else filename

    found: dict[tuple[str, int, str], tuple[Finding, str | None]] = {}
    if run.problem is not None:
        found[(shown_path, 1, INCOMPLETE)] = (Finding(
            INCOMPLETE, Severity.ERROR, f"gradguard could not verify this file: {run.problem}", shown_path,
            Span(Position(1, 0), Position(1, 0))), None)
    for raw in run.findings:
        site = raw["site"]
        related = tuple(Related(shown(r["site"]["filename"]), _span(r["site"]), r["message"]) for r in raw["related"])
        severity = Severity.WARNING if raw["code"] == SILENT else Severity.ERROR
        finding = Finding(raw["code"], severity, raw["message"], shown(site["filename"]), _span(site), related,
                          aten_op=raw.get("aten_op"))
        found.setdefault((finding.filename, site["line"], finding.code), (finding, raw.get("traceback")))
    return list(found.values())


def _wanted(finding: Finding, settings: Settings) -> bool:
    """Whether the settings and the line's `# noqa` let a runtime finding through."""
    if finding.code.startswith("GG") and not settings.enabled(finding.code, finding.filename):
        return False
    return not suppressed(linecache.getline(finding.filename, finding.span.start.line), finding.code)


def _with_fixes(finding: Finding) -> Finding:
    """A runtime-only finding with the fixes the static rule would offer at its line."""
    try:
        text = read_source(Path(finding.filename)).text
    except OSError:  # UnreadableSource too
        return finding
    fixes = runtime_fixes(Document.parse(finding.filename, text), finding)
    return replace(finding, fixes=fixes) if fixes else finding


def _unconfirmed(finding: Finding, run: FileRun) -> str:
    """Why the run did not confirm a static finding."""
    if finding.span.start.line not in run.reached:
        return f"The run on {run.device} did not reach this line."
    if finding.code == COMPILED and run.inductor_replaced is not None:
        return (f"Not confirmed: the run on {run.device} compiled the code with aot_eager instead of inductor "
                f"({run.inductor_replaced}), and aot_eager checks saved tensors as eager does.")
    return f"Not confirmed on this input: the run on {run.device} reached this line and met no such problem."


def merge(static: list[Finding], run: FileRun, shown_path: str, settings: Settings) -> list[Verified]:
    """Every finding of one verified file, static and runtime, each with its origin."""
    runtime = {(f.filename, f.span.start.line, f.code): (f, tb) for f, tb in runtime_findings(run, shown_path)
               if _wanted(f, settings)}
    device = run.device
    merged = []
    for finding in static:
        match = runtime.pop((finding.filename, finding.span.start.line, finding.code), None)
        if match is not None:
            lines = {r.span.start.line for r in finding.related}
            related = finding.related + tuple(r for r in match[0].related if r.span.start.line not in lines)
            merged.append(Verified(replace(finding, message=f"{finding.message} Confirmed by running it on {device}.",
                                           related=related), "both", device))
        elif run.problem is not None or device is None:
            merged.append(Verified(finding, "static", None))
        else:
            note = _unconfirmed(finding, run)
            merged.append(Verified(replace(finding, message=f"{finding.message} {note}"), "static", device))
    merged += [Verified(_with_fixes(f), "runtime", device, tb) for f, tb in runtime.values()]
    return sorted(merged, key=lambda v: (v.finding.filename != shown_path, v.finding.filename,
                                         v.finding.span.start, v.finding.code))

