"""One measurement of `bench/scan.py`, run in its own process with the project's python.

    worker.py parse TREE   libcst-parse every .py file of TREE (sources read first)
    worker.py walk TREE    the same, plus an empty visitor walk of each tree
    worker.py files TREE   gradguard's analysis file by file, as `gradguard check` runs it serially

Prints one JSON object on stdout: the file and line counts, the CPU seconds of the loop alone
and, for `files`, the milliseconds each analysed file took.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path

import libcst as cst


def read_sources(tree: Path) -> dict[Path, str]:
    """The text of every .py file under `tree`, in a stable order."""
    return {path: path.read_text(encoding="utf-8") for path in sorted(tree.rglob("*.py"))}


def parse(tree: Path, walk: bool) -> dict:
    """Parse every file (and walk each tree with a visitor that does nothing when `walk`)."""
    sources = read_sources(tree)
    start = time.process_time()
    for text in sources.values():
        module = cst.parse_module(text)
        if walk:
            module.visit(cst.CSTVisitor())
    return {"files": len(sources), "lines": sum(t.count("\n") for t in sources.values()),
            "loop_cpu_s": time.process_time() - start}


def per_file(tree: Path) -> dict:
    """Milliseconds (CPU) of parse + analysis per file, with one shared project index."""
    from gradguard.cli.files import mentions_torch, python_files
    from gradguard.config import ProjectSettings
    from gradguard.engine import analyse_document, project_index
    from gradguard.source.document import Document
    from gradguard.source.files import read_source
    from gradguard.source.parser import collector_paused

    projects = ProjectSettings(no_config=True)
    project = project_index()
    times: dict[str, float] = {}
    start = time.process_time()
    files = {path: raw for path in python_files([tree], respect_gitignore=False)  # third_party/ is git-ignored
             if mentions_torch(raw := path.read_bytes())}
    project.will_analyse(str(path) for path in files)  # as `gradguard check` tells its index
    for path, raw in files.items():
        text = read_source(path, raw).text
        began = time.process_time()
        document = Document.parse(str(path), text, project.parsed(str(path), text))
        with collector_paused():
            analyse_document(document, projects.for_path(path), project)
        del document
        gc.collect()  # as `gradguard check` does after each file (`cli/scan.py`)
        gc.freeze()
        times[str(path.relative_to(tree))] = (time.process_time() - began) * 1000
    return {"files": len(times), "loop_cpu_s": time.process_time() - start, "ms": times}


def main(argv: list[str]) -> int:
    mode, tree = argv[0], Path(argv[1])
    result = per_file(tree) if mode == "files" else parse(tree, walk=mode == "walk")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
