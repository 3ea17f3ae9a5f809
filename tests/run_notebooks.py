"""Runs notebooks as a kernel would, without one: each code cell in order in one namespace.

`python run_notebooks.py NB...` prints one JSON line per notebook: {"path", "cell", "error"}
(the 1-based number of the cell that raised and the exception's text, or nulls). Written apart
from gradguard's notebook model, so that it proves the labels instead of repeating them: IPython's
line magics and shell lines (`%…`, `!…`) do nothing here, a `%%time` or `%%capture` cell runs its
body, a cell with any other cell magic (`%%bash`, `%%writefile`) is not Python and is not run.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys

import torch

IPYTHON_LINE = re.compile(r"^[ \t]*[%!]")


def run(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        cells = json.load(handle)["cells"]
    namespace: dict = {"__name__": "__main__"}
    torch.manual_seed(0)
    for number, cell in enumerate(cells, 1):
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if cell["cell_type"] != "code":
            continue
        if source.startswith("%%"):
            if source.split(None, 1)[0] not in ("%%time", "%%capture"):
                continue
            source = "\n" + source.split("\n", 1)[1]
        code = "".join("pass\n" if IPYTHON_LINE.match(line) else line for line in source.splitlines(True))
        try:
            with contextlib.redirect_stdout(sys.stderr):  # what the cells print is not this script's answer
                exec(compile(code, f"<cell {number}>", "exec"), namespace)
        except Exception as error:  # the cell that raised, as a kernel shows it
            return {"path": path, "cell": number, "error": f"{type(error).__name__}: {error}"}
    return {"path": path, "cell": None, "error": None}


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        print(json.dumps(run(argument)), flush=True)
