"""Notebook documents (LSP 3.17 notebook sync): the cells an editor holds, as one program.

pygls keeps a synced notebook (`notebookDocument/didOpen`, `didChange` with cell text changes
and cell insertions, deletions and moves, `didClose`) in its workspace, each cell a text
document of its own. The server analyses the notebook under its own URI: the program of its
Python code cells in document order (`source/notebook.py`, magics masked as on the command
line), at the notebook's version; findings go back to the cells' URIs in cell-local positions.
A cell that does not parse on its own stands in the program as its last version that did (a
block of a file keeps its last good tree so), or as blank lines: it never reaches into the next
cell; its findings are those of its syntax error.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from functools import cached_property, lru_cache
from typing import Callable
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.workspace import TextDocument, Workspace

from gradguard.findings import Edit, Finding, Position, Span
from gradguard.source.notebook import Notebook, cell_for, split_lines

# Jupyter notebooks (VS Code's notebook type for .ipynb), their Python cells. The notebook is
# named: a selector without it is valid LSP, but lsprotocol's own converter cannot read it back.
SYNC = lsp.NotebookDocumentSyncOptions(notebook_selector=[lsp.NotebookDocumentFilterWithNotebook(
    notebook="jupyter-notebook", cells=[lsp.NotebookCellLanguage(language="python")])], save=False)


@dataclass
class OpenNotebook:
    """One synced notebook at one version: its cells' documents and the program they form."""

    uri: str
    version: int  # the server's count of the notebook's changes (`GradguardServer.revisions`)
    path: str  # the notebook's file path (settings, `exclude`, the findings' file name)
    cells: list[TextDocument]  # in document order, one per notebook cell (markdown cells included)
    model: Notebook
    languages: tuple[str, ...]  # each cell's language
    last_parsed: dict[str, str]  # per Python cell's URI: its program text when it last parsed on its own
    _localised: dict[int, list[Finding]] = field(default_factory=dict)
    _fixed: list[Edit] | None = None

    @cached_property
    def program(self) -> str:
        """What the server analyses: the model's program, each broken cell standing as its last
        version that parsed (`Notebook.program_standing_in`)."""
        stand_ins = {cell.number: self.last_parsed[document.uri] for cell, _ in self.model.broken
                     for document in [self.cells[cell.number - 1]] if document.uri in self.last_parsed}
        return self.model.program_standing_in(stand_ins)

    def outside_broken(self, findings: list[Finding]) -> list[Finding]:
        """`findings` (program lines) but those in a broken cell (its stand-in's), less the
        fixes that would edit one."""
        if not self.model.broken:
            return findings
        return [replace(f, fixes=tuple(fix for fix in f.fixes
                                       if not any(self.model.in_broken_cell(e.span.start.line) for e in fix.edits)))
                for f in findings if not self.model.in_broken_cell(f.span.start.line)]

    def cell_document(self, number: int) -> TextDocument | None:
        return self.cells[number - 1] if 0 < number <= len(self.cells) else None

    def number_of(self, cell_uri: str) -> int | None:
        return next((number for number, cell in enumerate(self.cells, 1) if cell.uri == cell_uri), None)

    def localised(self, findings: list[Finding]) -> list[Finding]:
        """`findings` (program lines) in cells, computed once per list."""
        key = id(findings)
        if key not in self._localised:
            self._localised = {key: [self.model.localised(f, relative=True) for f in findings]}
        return self._localised[key]

    def fix_all_edits(self, fix: Callable[[Notebook], Notebook]) -> list[Edit]:
        """The edits, in cell lines, that turn each cell into its source in `fix(model)` (the
        notebook with every safe fix applied); computed once per version: a client asks each
        cell for its part."""
        if self._fixed is None:
            fixed = fix(self.model)
            self._fixed = [edit for cell, new in zip(self.model.cells, fixed.cells) if new.source != cell.source
                           for edit in line_edits(cell.number, cell.source, new.source)]
        return self._fixed


def line_edits(number: int, old: str, new: str) -> list[Edit]:
    """Edits of cell `number` that turn `old` into `new`, one per run of changed lines."""
    old_lines, new_lines = split_lines(old), split_lines(new)

    def start_of(line: int) -> Position:  # 0-based line; past the last: the end of the text
        if line < len(old_lines) or not old_lines or old_lines[-1].endswith("\n"):
            return Position(line + 1, 0)
        return Position(len(old_lines), len(old_lines[-1]))

    return [Edit(Span(start_of(i1), start_of(i2), number), "".join(new_lines[j1:j2]))
            for tag, i1, i2, j1, j2 in SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes()
            if tag != "equal"]


_unquoted = lru_cache(maxsize=4096)(unquote)  # how pygls keys its documents: a cell's URI, at every keystroke


def open_notebook(workspace: Workspace, uri: str, version: int,
                  previous: OpenNotebook | None = None) -> OpenNotebook | None:
    """The synced notebook at `uri` as it is now (its `version` as the server counts them), or
    None when it is not open; `previous`: its last snapshot (its cells' last parsed versions, and
    its cells, kept where unchanged: a keystroke reads one cell again, not all of them)."""
    notebook = workspace.get_notebook_document(notebook_uri=uri)
    if notebook is None:
        return None
    documents = [workspace.text_documents.get(_unquoted(cell.document)) or workspace.get_text_document(cell.document)
                 for cell in notebook.cells]
    languages = tuple((document.language_id or "python").lower() for document in documents)
    known = {(cell.kind, cell.source, language): cell for cell, language in zip(
        previous.model.cells, previous.languages)} if previous is not None else {}
    cells = []
    for number, (cell, document, language) in enumerate(zip(notebook.cells, documents, languages), 1):
        kind = "code" if cell.kind == lsp.NotebookCellKind.Code else "markdown"
        same = known.get((kind, document.source, language))
        cells.append(cell_for(number, kind, document.source, language) if same is None else
                     same if same.number == number else replace(same, number=number))
    path = previous.path if previous is not None and previous.uri == uri else TextDocument(notebook.uri).path
    model = Notebook("", tuple(cells))
    broken = {cell.number for cell, _ in model.broken}
    before = previous.last_parsed if previous is not None else {}
    last_parsed = {document.uri: cell.program_text if cell.number not in broken else before[document.uri]
                   for cell, document in zip(cells, documents)
                   if cell.python and (cell.number not in broken or document.uri in before)}
    return OpenNotebook(uri, version, path, documents, model, languages, last_parsed)


def notebook_of_cell(workspace: Workspace, cell_uri: str) -> str | None:
    """The URI of the synced notebook holding the cell at `cell_uri`."""
    notebook = workspace.get_notebook_document(cell_uri=cell_uri)
    return notebook.uri if notebook is not None else None


def in_cell(span: Span, notebook: OpenNotebook) -> tuple[TextDocument, Span] | None:
    """The cell document a (cell-local) span lies in."""
    document = notebook.cell_document(span.cell) if span.cell is not None else None
    return (document, span) if document is not None else None
