"""Keystroke latency in a 40-cell Jupyter notebook: `gradguard lsp` against `ruff server`, in the
same run, both driven over stdio with LSP 3.17 notebook sync as VS Code sends it (only the Python
code cells, each a `vscode-notebook-cell:` document; a cell edit is a `notebookDocument/didChange`
whose notebook version stays as it was).

The notebook (its cells' URIs name a temporary folder): 40 cells, 30 of them Python (imports,
residual blocks as `nn.Module` classes, helpers, data, the model, a training loop, evaluation, a
shell line) and 10 markdown, ~400 lines in all. The session: didOpen of the notebook, the time to the first
diagnostics of every code cell; then typing at the end of the training-loop cell (cell 36), one
didChange per character, lines that make a tensor the output of `torch.sigmoid` of an earlier
cell's model output and change it in place (GG001 appears, half-typed lines give syntax
diagnostics), then a backward pass through it, then backspacing them all away. Latency = from sending a keystroke's didChange to
the first publishDiagnostics of the typed cell after it.

`python bench/notebook_latency.py` (ruff from bench/.venv-ruff, as `make bench-lsp` installs
it); appends to bench/results.md unless `--no-append`; `--skip-ruff`, `--rounds N`.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsp_latency import RESULTS, ROOT, RUFF, Client, percentile

TYPED = "\nh = torch.sigmoid(logits)\nh.mul_(2)\nh.sum().backward()"
TYPED_CELL = 36  # 1-based among all cells: the training loop


def _block(index: int) -> str:
    return f'''class Block{index}(nn.Module):
    """A residual block: conv, batch norm, ReLU, twice."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.act(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = out + identity
        return self.act(out)
'''


def _helper(index: int) -> str:
    return f'''def scale_{index}(t: torch.Tensor, factor: float = {index + 1}.0) -> torch.Tensor:
    """Scales `t` out of place; {index} of the helpers."""
    result = t * factor
    if result.dim() > 1:
        result = result.flatten(1)
    return result.clamp(-10.0, 10.0)


stats_{index} = {{"mean": 0.0, "std": 1.0, "seen": 0}}
'''


def cells() -> list[tuple[str, str]]:
    """The 40 cells: (kind, source)."""
    out: list[tuple[str, str]] = [
        ("markdown", "# Training a small residual network\n\nA notebook for the latency benchmark."),
        ("code", "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n%matplotlib inline\n"
                 "torch.manual_seed(0)\n"),
    ]
    for index in range(12):
        out.append(("code", _block(index)))
        if index % 4 == 3:
            out.append(("markdown", f"## Blocks {index - 3}–{index}\n\nEach keeps the shape of its input."))
    for index in range(12):
        out.append(("code", _helper(index)))
        if index % 4 == 3:
            out.append(("markdown", f"## Helpers {index - 3}–{index}"))
    out.append(("code", "class Net(nn.Module):\n    def __init__(self) -> None:\n        super().__init__()\n"
                        "        self.stem = nn.Conv2d(3, 8, 3, padding=1)\n"
                        "        self.blocks = nn.Sequential(*[globals()[f'Block{i}'](8) for i in range(12)])\n"
                        "        self.head = nn.Linear(8, 10)\n\n"
                        "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
                        "        x = self.blocks(self.stem(x))\n        return self.head(x.mean((2, 3)))\n"))
    out.append(("code", "model = Net()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                        "images = torch.randn(4, 3, 16, 16)\nlabels = torch.randint(0, 10, (4,))\n"))
    out.append(("markdown", "## Training"))
    out.append(("code", "for step in range(3):\n    optimizer.zero_grad()\n    logits = model(images)\n"
                        "    loss = F.cross_entropy(logits, labels)\n    loss.backward()\n    optimizer.step()\n"
                        "    print(step, loss.item())\n\nlogits = model(images)\nloss = F.cross_entropy(logits, labels)"))
    out.append(("code", "loss.backward()\nwith torch.no_grad():\n    accuracy = (logits.argmax(1) == labels).float().mean()\n"
                        "print(accuracy)\n"))
    out.append(("code", "!nvidia-smi\n"))
    out.append(("markdown", "Done."))
    out.append(("markdown", "Notes: the blocks keep their input's shape, so they stack in any number."))
    assert len(out) == 40 and out[TYPED_CELL - 1][0] == "code", len(out)
    return out


class Notebook:
    """The client's side: the notebook's URI, its code cells' URIs, texts and versions."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "train.ipynb"
        self.uri = self.path.as_uri()
        self.cells = [(f"vscode-notebook-cell:{self.path}#W{n}sZmlsZQ%3D%3D", kind, text)
                      for n, (kind, text) in enumerate(cells(), 1)]
        self.code = [(uri, text) for uri, kind, text in self.cells if kind == "code"]
        self.typed_uri = self.cells[TYPED_CELL - 1][0]

    def open(self, client: Client) -> float:
        return client.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": self.uri, "notebookType": "jupyter-notebook", "version": 0, "metadata": {},
                                 "cells": [{"kind": 2, "document": uri} for uri, _ in self.code]},
            "cellTextDocuments": [{"uri": uri, "languageId": "python", "version": 1, "text": text}
                                  for uri, text in self.code]})


def keystrokes(text: str, rounds: int) -> list[tuple[int, int, int, int, str]]:
    """TYPED typed at the end of the cell, one character at a time, then deleted with backspace."""
    lines = text.split("\n")
    strokes = []
    for _ in range(rounds):
        row, column, typed = len(lines) - 1, len(lines[-1]), []
        for char in TYPED:
            strokes.append((row, column, row, column, char))
            typed.append((row, column))
            row, column = (row + 1, 0) if char == "\n" else (row, column + 1)
        for (row, column), char in reversed(list(zip(typed, TYPED))):
            end = (row + 1, 0) if char == "\n" else (row, column + 1)
            strokes.append((row, column, *end, ""))
    return strokes


def initialize(client: Client) -> None:
    response = client.call("initialize", {
        "processId": os.getpid(), "rootUri": ROOT.as_uri(), "rootPath": str(ROOT),
        "workspaceFolders": [{"uri": ROOT.as_uri(), "name": ROOT.name}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "textDocument": {"synchronization": {"didSave": True},
                             "publishDiagnostics": {"relatedInformation": True, "versionSupport": True}},
            "notebookDocument": {"synchronization": {"dynamicRegistration": False}},
            "workspace": {"configuration": True, "workspaceFolders": True},
        },
        "initializationOptions": {},
    })
    assert "result" in response, response
    client.notify("initialized", {})


def first_publish_after(client: Client, uri: str, sent: float) -> float | None:
    def arrived() -> bool:
        return uri in client.last_publish and client.last_publish[uri][0] >= sent
    client.wait(arrived, f"diagnostics of {uri}")
    return client.last_publish[uri][0] if arrived() else None


def session(name: str, command: list[str], rounds: int, folder: Path) -> dict:
    print(f"{name}: {' '.join(command)}", file=sys.stderr)
    client = Client(command)
    notebook = Notebook(folder)
    result: dict = {"name": name}
    try:
        initialize(client)
        sent = notebook.open(client)
        client.wait(lambda: all(uri in client.last_publish for uri, _ in notebook.code), "every cell's diagnostics")
        if all(uri in client.last_publish for uri, _ in notebook.code):
            result["first_ms"] = (max(client.last_publish[uri][0] for uri, _ in notebook.code) - sent) * 1000
        time.sleep(1.0)  # what the first analysis starts in the background (reading imports) settles
        latencies, missing, codes, cell_version = [], 0, set(), 1
        for row, column, end_row, end_column, new in keystrokes(dict(notebook.code)[notebook.typed_uri], rounds):
            cell_version += 1
            sent = client.notify("notebookDocument/didChange", {
                "notebookDocument": {"uri": notebook.uri, "version": 0},
                "change": {"cells": {"textContent": [{
                    "document": {"uri": notebook.typed_uri, "version": cell_version},
                    "changes": [{"range": {"start": {"line": row, "character": column},
                                           "end": {"line": end_row, "character": end_column}}, "text": new}]}]}}})
            arrived = first_publish_after(client, notebook.typed_uri, sent)
            if arrived is None:
                missing += 1
                continue
            latencies.append((arrived - sent) * 1000)
            codes.add(tuple(sorted(str(d.get("code")) for d in client.last_publish[notebook.typed_uri][1])))
        result.update(keystrokes=cell_version - 1, published=len(latencies), missing=missing,
                      gg001_seen=any("GG001" in c for c in codes), rss_mb=client.rss_mb()[0])
        if latencies:
            result.update(p50=statistics.median(latencies), p95=percentile(latencies, 0.95), max=max(latencies))
    finally:
        client.stop()
    return result


def fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def report(results: list[dict], rounds: int) -> str:
    code_cells = sum(kind == "code" for kind, _ in cells())
    lines_count = sum(text.count("\n") + 1 for _, text in cells())
    text = dict((uri, t) for uri, t in Notebook(Path("/x")).code)
    strokes = len(keystrokes(text[Notebook(Path("/x")).typed_uri], rounds))
    out = [f"# Notebook keystroke latency, {datetime.datetime.now().isoformat(timespec='seconds')}", "",
           f"`bench/notebook_latency.py`: a 40-cell notebook ({code_cells} Python cells, {lines_count} lines), "
           f"synced as VS Code syncs it; {strokes} keystrokes typed at the end of cell {TYPED_CELL} (the training "
           "loop) and deleted again, one `notebookDocument/didChange` each, waiting for that cell's diagnostics.  ",
           f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load average "
           f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} at the end.", "",
           "| server | all cells diagnosed after didOpen (ms) | p50 (ms) | p95 (ms) | max (ms) | publishes / keystrokes "
           "| GG001 while typing | RSS (MB) |", "|---|---:|---:|---:|---:|---:|---|---:|"]
    for r in results:
        out.append(f"| {r['name']} | {fmt(r.get('first_ms'), 0)} | {fmt(r.get('p50'))} | {fmt(r.get('p95'))} "
                   f"| {fmt(r.get('max'))} | {r.get('published', 0)} / {r.get('keystrokes', 0)} "
                   f"| {'yes' if r.get('gg001_seen') else 'no'} | {fmt(r.get('rss_mb'), 0)} |")
    ours, ruff = results[0], next((r for r in results if r["name"].startswith("ruff")), None)
    if ruff is not None and ruff.get("p95") is not None and ours.get("p95") is not None:
        verdict = "PASS" if ours["p95"] <= ruff["p95"] else "FAIL"
        out += ["", "| target | measured | result |", "|---|---|---|",
                f"| p95 ≤ ruff's p95 on the same notebook (same run) | {ours['p95']:.1f} ms vs {ruff['p95']:.1f} ms "
                f"| {verdict} |"]
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-ruff", action="store_true")
    parser.add_argument("--rounds", type=int, default=1, help="how many times to type and delete the lines")
    parser.add_argument("--no-append", action="store_true", help=f"print only; do not append to {RESULTS.name}")
    parser.add_argument("--ruff", default=str(RUFF), help="the ruff executable")
    parser.add_argument("--gradguard", default=f"{ROOT / '.venv' / 'bin' / 'gradguard'} lsp")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gg-notebook-bench-") as folder:
        results = [session("gradguard lsp", args.gradguard.split(), args.rounds, Path(folder))]
        if not args.skip_ruff:
            version = subprocess.run([args.ruff, "--version"], capture_output=True, text=True).stdout.strip()
            results.append(session(f"{version} server", [args.ruff, "server"], args.rounds, Path(folder)))
    text = report(results, args.rounds)
    print(text)
    if not args.no_append:
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
