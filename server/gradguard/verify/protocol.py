"""What the child tells the parent: the codes of runtime findings and their wording.

Findings travel as JSON dicts (`raw_finding`); sites as `{"filename", "line", "column",
"end_column"}` with 1-based lines and 0-based code-point columns. Imports nothing of torch.
"""

from __future__ import annotations

import linecache
from pathlib import Path

from gradguard import SAVED_TENSOR_ERROR

SAVED = "GG001"
LEAF = "GG002"
VIEW = "GG003"
SILENT = "GG004"
COMPILED = "GG005"  # a compiled region's save, changed outside it: the compiled backward computes from the change
OTHER_ERROR = "GV001"  # user-code-raised: the user's code raised something other than an in-place error
INCOMPLETE = "GV002"  # run-incomplete: the run could not be done or did not finish (time or memory limit, crash)


def memory_limit_stop(memory: int, what: str, enforced_by: str) -> str:
    """Why a run that `what` ("used more than") its memory limit of `memory` MiB was stopped, and
    how to raise the limit (a run's problem, as a time limit's is)."""
    return (f"the run {what} its memory limit of {memory} MiB and was stopped (enforced by {enforced_by}); "
            "raise the limit with `memory = MIB` in [tool.gradguard.verify] (pyproject.toml)")


def raw_finding(code: str, message: str, site: dict, related: list[dict], traceback: str | None = None,
                aten_op: str | None = None) -> dict:
    """One runtime finding as the child sends it (`aten_op`: the op that saved the tensor, for JSON)."""
    return {"code": code, "message": message, "site": site, "related": related, "traceback": traceback,
            "aten_op": aten_op}


def spelled(site: dict | None, limit: int = 48) -> str | None:
    """The user's code at `site` (on its one line), shortened past `limit` characters; None when unknown."""
    if site is None:
        return None
    code = linecache.getline(site["filename"], site["line"])[site["column"]:site["end_column"]].strip()
    if not code:
        return None
    return code if len(code) <= limit else code[: limit - 1].rstrip() + "…"


def _name(op: str, via: str | None, site: dict | None) -> str:
    """What the user wrote at `site` (the ATen op's name only when the line cannot be read), and the
    torch module or optimizer the op ran in."""
    code = spelled(site)
    base = f"`{code}`" if code else f"`{op.split('.')[0]}`"
    return f"{base} (in {via})" if via else base


def hazard_message(kind: str, mutation_op: str, mutation_via: str | None, mutation_site: dict, saved_op: str,
                   saved_via: str | None, role: str, description: str, saved_site: dict | None,
                   device: str) -> tuple[str, list[dict]]:
    """The message of a GG001/GG004 found at run time (a GG005's up to its outcome: `COMPILED`), and
    its related location (the save)."""
    saver = _name(saved_op, saved_via, saved_site) if saved_op != "?" else "an op"
    what = {"output": "its output", "input": "its input"}.get(role, role)
    where = f" at {_line(saved_site, mutation_site)}" if saved_site is not None else ""
    changer = _name(mutation_op, mutation_via, mutation_site)
    if kind == SAVED:
        message = (f"{changer} changes in place a {description} tensor that {saver} saved "
                   f"for backward ({what}){where}: backward through it will raise \"{SAVED_TENSOR_ERROR}\". "
                   f"Found running on {device}.")
    elif kind == COMPILED:
        message = f"{changer} changes in place a {description} tensor that {saver} saved for backward ({what}){where}"
    else:
        message = (f"{changer} overwrites a {description} tensor that {saver} saved for "
                   f"backward ({what}){where}, through an alias with its own version counter (`.data`, "
                   f"`unsafe_chunk`): backward will not raise, but its gradients will be wrong. "
                   f"Found running on {device}.")
    related = [] if saved_site is None else [
        {"site": saved_site, "message": f"{saver} saved the tensor for backward here ({what})"}]
    return message, related


def _line(site: dict, of: dict) -> str:
    """`line 12` (or `file.py:12` in another file than `of`'s)."""
    return f"{'line ' if site['filename'] == of['filename'] else Path(site['filename']).name + ':'}{site['line']}"


def compiled_message(hazard: str, mutation_site: dict, call_site: dict | None, asked: str, backend: str,
                     eager: dict, device: str) -> tuple[str, list[dict]]:
    """The message of a GG005 found at run time, and its related locations. `hazard`: the tracer's
    GG001 message up to its outcome; `eager`: how the eager run ended ({"site", "error"}, its
    error None when it ran to its end with other gradients)."""
    called = spelled(call_site)
    region = f"code compiled by `torch.compile` (backend \"{asked}\")"
    if call_site is not None:
        region += f" that {f'`{called}`' if called else 'a call'} ran at {_line(call_site, mutation_site)}"
    if eager["error"] is not None:
        at = f"`{spelled(eager['site'])}` ({_line(eager['site'], mutation_site)})" if eager["site"] else "backward"
        outcome = (f"eager, {at} raised \"{eager['error']}\"; compiled by {backend}, backward raised nothing and "
                   "computed the gradients from the changed value")
    else:
        outcome = f"eager and compiled by {backend}, the gradients differ and nothing raised"
    message = f"{hazard}, inside {region}: {outcome}. Found running it eager and compiled on {device}."
    related = []
    if call_site is not None:
        related.append({"site": call_site, "message": f"the compiled `{called or 'region'}` ran here"})
    if eager["error"] is not None and eager["site"] is not None:
        related.append({"site": eager["site"], "message": f"eager, this raised; compiled by {backend}, it computed "
                                                          "the gradients from the changed value"})
    return message, related
