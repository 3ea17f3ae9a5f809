"""`gradguard verify FILE...`: run files under the tracer and print the merged findings."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from gradguard.cli.output import finding_to_json
from gradguard.cli.text import Style, cell_key, render_full, use_colour
from gradguard.config import ConfigError
from gradguard.source.files import NOTEBOOK_MAX_BYTES, NotANotebook, is_notebook, read_source
from gradguard.source.notebook import Notebook
from gradguard.project_python import InterpreterError, find_interpreter
from gradguard.verify.merge import Verified
from gradguard.verify.protocol import INCOMPLETE
from gradguard.verify.settings import load_verify_settings
from gradguard.verify.pipeline import verify_paths


def verified_to_json(verified: Verified) -> dict:
    """`gradguard check --format json`'s object plus `origin`, `device` (and a user exception's `traceback`)."""
    item = {**finding_to_json(verified.finding), "origin": verified.origin, "device": verified.device}
    if verified.traceback is not None:
        item["traceback"] = verified.traceback
    return item


def _texts(paths: list[str]) -> tuple[dict[str, str], dict[str, Notebook]]:
    """The files' texts (a notebook's cells under their keys), and the notebooks among them."""
    texts, notebooks = {}, {}
    for path in paths:
        try:
            texts[path] = read_source(Path(path), limit=NOTEBOOK_MAX_BYTES if is_notebook(path) else None).text
            if is_notebook(path):
                notebook = notebooks[path] = Notebook.parse(texts[path])
                texts.update((cell_key(path, cell.number), cell.source) for cell in notebook.cells)
        except (OSError, NotANotebook):
            pass
    return texts, notebooks


def _in_cells(verified: Verified, notebooks: dict[str, Notebook]) -> Verified:
    """A notebook's finding (in its program's lines) placed in its cells."""
    notebook = notebooks.get(verified.finding.filename)
    return verified if notebook is None else replace(verified, finding=notebook.localised(verified.finding))


def run_verify(args: argparse.Namespace) -> int:
    """Exit 0 when nothing is found, 1 when something is, 2 when a run could not be done."""
    missing = [p for p in args.paths if not p.is_file()]
    if missing:
        print(f"gradguard: no such file: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    if args.inputs and not args.target:
        print("gradguard: --input needs --target: the inputs are those of the target's forward", file=sys.stderr)
        return 2
    try:
        settings = load_verify_settings(args.paths[0])
        interpreter = find_interpreter(args.paths[0], args.python)
    except (ConfigError, InterpreterError) as error:
        print(f"gradguard: {error}", file=sys.stderr)
        return 2
    settings = replace(settings, device=args.device or settings.device, timeout=settings.timeout if args.timeout is None else args.timeout)
    if args.inputs:
        settings = replace(settings, targets={**settings.targets,
                                              args.target: {**settings.targets.get(args.target, {}), "inputs": args.inputs}})
    sys.stdout.flush()
    results = verify_paths(args.paths, args.target, settings, interpreter, output=sys.stderr.fileno())
    texts, notebooks = _texts([r.path for r in results])
    verified = [_in_cells(v, notebooks) for result in results for v in result.findings]
    if args.format == "json":
        print(json.dumps([verified_to_json(v) for v in verified], indent=2, ensure_ascii=False))
    else:
        text = render_full([v.finding for v in verified], texts, Style(use_colour(sys.stdout)))
        if text:
            print(text)
        found = [v for v in verified if v.finding.code != INCOMPLETE]  # a run not done is no finding of the code
        confirmed = sum(v.origin == "both" for v in found)
        runtime = sum(v.origin == "runtime" for v in found)
        print(f"Found {len(found)} problem{'s' if len(found) != 1 else ''} "
              f"({confirmed} confirmed at run time, {runtime} found only at run time).", file=sys.stderr)
    for result in results:
        if result.problem is not None:
            print(f"gradguard: could not verify {result.path}: {result.problem}", file=sys.stderr)
    if any(result.problem is not None for result in results):
        return 2
    return 1 if verified else 0
