"""Notebook documents (LSP 3.17 notebook sync): the cells an editor holds, as one program.

pygls keeps a synced notebook (`notebookDocument/didOpen`, `didChange` with cell text changes
and cell insertions, deletions and moves, `didClose`) in its workspace, each cell a text
document of its own. The server analyses the notebook under its own URI: the program of its
Python code cells in document order (`source/notebook.py`, magics masked as on the command
line), at the notebook's version; findings go back to the cells' URIs in cell-local positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from lsprotocol import types as lsp
from pygls.workspace import TextDocument, Workspace

from gradguard.findings import Finding, Span
from gradguard.source.notebook import Notebook, cell_for

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
    _localised: dict[int, list[Finding]] = field(default_factory=dict)

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


def open_notebook(workspace: Workspace, uri: str, version: int, previous: OpenNotebook | None = None
                  ) -> OpenNotebook | None:
    """The synced notebook at `uri` as it is now (its `version` as the server counts them), or
    None when it is not open. The cells of its `previous` snapshot that are unchanged are kept
    (a keystroke reads one cell again, not all of them)."""
    notebook = workspace.get_notebook_document(notebook_uri=uri)
    if notebook is None:
        return None
    documents = [workspace.get_text_document(cell.document) for cell in notebook.cells]
    known = {(cell.kind, cell.source, language): cell for cell, language in zip(
        previous.model.cells, previous.languages)} if previous is not None else {}
    languages = tuple((document.language_id or "python").lower() for document in documents)
    cells = []
    for number, (cell, document, language) in enumerate(zip(notebook.cells, documents, languages), 1):
        kind = "code" if cell.kind == lsp.NotebookCellKind.Code else "markdown"
        same = known.get((kind, document.source, language))
        cells.append(cell_for(number, kind, document.source, language) if same is None else
                     same if same.number == number else replace(same, number=number))
    path = TextDocument(notebook.uri).path
    return OpenNotebook(uri, version, path, documents, Notebook("", tuple(cells)), languages)


def notebook_of_cell(workspace: Workspace, cell_uri: str) -> str | None:
    """The URI of the synced notebook holding the cell at `cell_uri`."""
    notebook = workspace.get_notebook_document(cell_uri=cell_uri)
    return notebook.uri if notebook is not None else None


def in_cell(span: Span, notebook: OpenNotebook) -> tuple[TextDocument, Span] | None:
    """The cell document a (cell-local) span lies in."""
    document = notebook.cell_document(span.cell) if span.cell is not None else None
    return (document, span) if document is not None else None
