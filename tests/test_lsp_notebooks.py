"""Notebooks in `gradguard lsp`: LSP 3.17 notebook sync as VS Code sends it (only the cells the
server's selector takes: Python code cells, each a `vscode-notebook-cell:` document). The cells
are one program in document order: a finding goes to its cell's URI in cell-local positions
(UTF-16), its related location names the earlier cell, its quick fix edits the cells, and the
notebook it leaves runs cleanly with torch (run_notebooks.py)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from helpers import ROOT
from test_notebooks import run_in_order

NOTEBOOK = ROOT / "tests" / "notebooks" / "cell_pair_exp.ipynb"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "gradguard", "lsp"]))
async def client(lsp_client: LanguageClient):
    capabilities = client_capabilities("visual-studio-code")
    capabilities.notebook_document = lsp.NotebookDocumentClientCapabilities(
        synchronization=lsp.NotebookDocumentSyncClientCapabilities(execution_summary_support=True))
    result = await lsp_client.initialize_session(lsp.InitializeParams(capabilities=capabilities))
    lsp_client.server_capabilities = result.capabilities
    yield
    await lsp_client.shutdown_session()


class Notebook:
    """The client's side of a synced notebook: its cells' URIs and texts, in order."""

    def __init__(self, client: LanguageClient, path: Path, cells: list[str]) -> None:
        self.client, self.uri, self.version = client, path.as_uri(), 0
        self.serial = 0
        self.cell_versions: dict[str, int] = {}
        self.cells: list[tuple[str, str]] = []
        for text in cells:
            self.cells.append((self._new_uri(), text))

    def _new_uri(self) -> str:
        self.serial += 1
        return f"vscode-notebook-cell:{self.uri[len('file://'):]}#W{self.serial}sZmlsZQ%3D%3D"

    def open(self) -> None:
        self.client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
            notebook_document=lsp.NotebookDocument(
                uri=self.uri, notebook_type="jupyter-notebook", version=self.version,
                cells=[lsp.NotebookCell(kind=lsp.NotebookCellKind.Code, document=uri) for uri, _ in self.cells],
                metadata={"custom": {}}),
            cell_text_documents=[lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
                                 for uri, text in self.cells]))

    def type_in(self, number: int, text: str) -> None:
        """Replace cell `number`'s whole text (as VS Code sends a cell edit: a ranged change)."""
        uri, old = self.cells[number - 1]
        lines = old.split("\n")
        self.cell_versions[uri] = self.cell_versions.get(uri, 1) + 1  # VS Code's notebook version stays as it was
        self.cells[number - 1] = (uri, text)
        self.client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
            notebook_document=lsp.VersionedNotebookDocumentIdentifier(version=self.version, uri=self.uri),
            change=lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(text_content=[
                lsp.NotebookDocumentCellContentChanges(
                    document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.cell_versions[uri]),
                    changes=[lsp.TextDocumentContentChangePartial(
                        range=lsp.Range(lsp.Position(0, 0), lsp.Position(len(lines) - 1, len(lines[-1]))),
                        text=text)])]))))

    def structure(self, start: int, delete: int, new: list[str]) -> None:
        """Replace `delete` cells from index `start` by cells holding `new` (a move: delete + insert)."""
        self.version += 1
        removed = self.cells[start:start + delete]
        added = [(self._new_uri(), text) for text in new]
        self.cells[start:start + delete] = added
        self.client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
            notebook_document=lsp.VersionedNotebookDocumentIdentifier(version=self.version, uri=self.uri),
            change=lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(
                structure=lsp.NotebookDocumentCellChangeStructure(
                    array=lsp.NotebookCellArrayChange(start=start, delete_count=delete, cells=[
                        lsp.NotebookCell(kind=lsp.NotebookCellKind.Code, document=uri) for uri, _ in added]),
                    did_open=[lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
                              for uri, text in added],
                    did_close=[lsp.TextDocumentIdentifier(uri=uri) for uri, _ in removed])))))

    def close(self) -> None:
        self.client.notebook_document_did_close(lsp.DidCloseNotebookDocumentParams(
            notebook_document=lsp.NotebookDocumentIdentifier(uri=self.uri),
            cell_text_documents=[lsp.TextDocumentIdentifier(uri=uri) for uri, _ in self.cells]))

    async def diagnostics(self) -> dict[int, list[lsp.Diagnostic]]:
        """Once every cell has had diagnostics published: by cell number (from 1)."""
        for _ in range(600):
            if all(uri in self.client.diagnostics for uri, _ in self.cells):
                await asyncio.sleep(0.3)  # the rest of this round of publications
                return self.shown()
            await asyncio.sleep(0.05)
        raise AssertionError(f"no diagnostics for some cells: {self.shown()}")

    def shown(self) -> dict[int, list[lsp.Diagnostic]]:
        return {n: list(self.client.diagnostics.get(uri, ())) for n, (uri, _) in enumerate(self.cells, 1)}

    async def until(self, expected: dict[int, list]) -> None:
        """Waits (30 s at most) until the diagnostics shown per cell are `expected` (a cell whose
        findings did not change is not published again)."""
        for _ in range(600):
            if {n: [d.code for d in found] for n, found in self.shown().items()} == expected:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"diagnostics {self.shown()} are not {expected}")


def code_cells() -> list[str]:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"]


def apply_to_cells(cells: list[tuple[str, str]], edit: lsp.WorkspaceEdit) -> list[str]:
    """The cells' texts after `edit` (documentChanges or changes; UTF-16 columns)."""
    by_uri: dict[str, list[lsp.TextEdit]] = dict((edit.changes or {}).items())
    for change in edit.document_changes or []:
        by_uri.setdefault(change.text_document.uri, []).extend(change.edits)
    assert set(by_uri) <= {uri for uri, _ in cells}, by_uri
    texts = []
    for uri, text in cells:
        lines = text.splitlines(keepends=True) or [""]
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))

        def offset(position: lsp.Position) -> int:
            if position.line >= len(lines):
                return len(text)
            line, units, index = lines[position.line], 0, 0
            while index < len(line) and units < position.character:
                units += len(line[index].encode("utf-16-le")) // 2
                index += 1
            return starts[position.line] + index

        for item in sorted(by_uri.get(uri, []), key=lambda e: (e.range.start.line, e.range.start.character),
                           reverse=True):
            text = text[:offset(item.range.start)] + item.new_text + text[offset(item.range.end):]
        texts.append(text)
    return texts


def as_ipynb(path: Path, cells: list[str]) -> Path:
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                           "source": text} for text in cells],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


@pytest.mark.asyncio(loop_scope="function")
async def test_the_server_advertises_notebook_sync_for_python_cells(client: LanguageClient):
    sync = client.server_capabilities.notebook_document_sync
    assert [[cell.language for cell in selector.cells] for selector in sync.notebook_selector] == [["python"]]


@pytest.mark.asyncio(loop_scope="function")
async def test_a_finding_goes_to_its_cell_and_names_the_earlier_cell_that_saved(client: LanguageClient, tmp_path):
    notebook = Notebook(client, tmp_path / "nb.ipynb", code_cells())
    assert run_in_order(as_ipynb(tmp_path / "proof.ipynb", code_cells()))["proof.ipynb"]["cell"] == 2
    notebook.open()
    by_cell = await notebook.diagnostics()
    assert by_cell[1] == []
    [diagnostic] = by_cell[2]
    assert (diagnostic.code, diagnostic.range) == ("GG001", lsp.Range(lsp.Position(1, 0), lsp.Position(1, 6)))
    assert "(an earlier cell, line 5)" in diagnostic.message  # VS Code syncs no markdown cell: no numbers
    saved, raises = diagnostic.related_information
    assert (saved.location.uri, saved.location.range.start) == (notebook.cells[0][0], lsp.Position(4, 4))
    assert (raises.location.uri, raises.location.range.start) == (notebook.cells[1][0], lsp.Position(2, 0))

    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(notebook.cells[1][0]), range=diagnostic.range,
        context=lsp.CodeActionContext(diagnostics=[diagnostic])))
    [preferred] = [a for a in actions if a.is_preferred]
    fixed = apply_to_cells(notebook.cells, preferred.edit)
    assert fixed[1] == "!echo training\ny = y + 1  # expect: GG001\ny.sum().backward()\n"
    assert run_in_order(as_ipynb(tmp_path / "fixed.ipynb", fixed))["fixed.ipynb"]["error"] is None
    clone = next(a for a in actions if "Clone" in a.title)  # the other fix edits the earlier cell
    cloned = apply_to_cells(notebook.cells, clone.edit)
    assert cloned[1] == notebook.cells[1][1] and cloned[0].endswith("y = x.exp().clone()")
    assert run_in_order(as_ipynb(tmp_path / "cloned.ipynb", cloned))["cloned.ipynb"]["error"] is None
    silence = next(a for a in actions if a.title == "gradguard: disable GG001 for this line")
    assert apply_to_cells(notebook.cells, silence.edit)[1] == \
        "!echo training\ny += 1  # expect: GG001  # noqa: GG001\ny.sum().backward()\n"

    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(notebook.cells[1][0]), position=lsp.Position(1, 0)))
    assert "saved for backward" in hover.contents.value and "(an earlier cell, line 5)" in hover.contents.value

    notebook.type_in(2, fixed[1])
    await notebook.until({1: [], 2: []})


@pytest.mark.asyncio(loop_scope="function")
async def test_cell_order_insertions_moves_and_deletions_are_followed(client: LanguageClient, tmp_path):
    setup, train = code_cells()
    notebook = Notebook(client, tmp_path / "nb.ipynb", [train, setup])  # run in this order, nothing is saved
    notebook.open()
    assert (await notebook.diagnostics()) == {1: [], 2: []}
    notebook.structure(0, 1, [])  # the training cell is deleted ...
    notebook.structure(1, 0, ["s = '😀'; y += 1\ny.sum().backward()\n"])  # ... and one typed after setup
    await notebook.until({1: [], 2: ["GG001"]})
    [diagnostic] = notebook.shown()[2]
    assert diagnostic.range == lsp.Range(lsp.Position(0, 10), lsp.Position(0, 16))  # UTF-16: the emoji counts 2, not 1
    notebook.structure(0, 2, [notebook.cells[1][1], notebook.cells[0][1]])  # moved above the setup cell
    await notebook.until({1: [], 2: []})
    notebook.close()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "gradguard", "lsp"]))
async def pulling_client(lsp_client: LanguageClient):
    """VS Code as it is today: it pulls diagnostics (textDocument/diagnostic), cell by cell."""
    capabilities = client_capabilities("visual-studio-code")
    capabilities.notebook_document = lsp.NotebookDocumentClientCapabilities(
        synchronization=lsp.NotebookDocumentSyncClientCapabilities())
    capabilities.text_document.diagnostic = lsp.DiagnosticClientCapabilities(related_document_support=True)
    capabilities.workspace.diagnostics = lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=capabilities))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_a_pulling_client_gets_each_cell_s_own_report(pulling_client: LanguageClient, tmp_path):
    notebook = Notebook(pulling_client, tmp_path / "nb.ipynb", code_cells())
    notebook.open()

    async def pull(number: int) -> list[lsp.Diagnostic]:
        report = await pulling_client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
            text_document=lsp.TextDocumentIdentifier(notebook.cells[number - 1][0])))
        return list(report.items)

    [diagnostic] = await pull(2)
    assert (diagnostic.code, diagnostic.range.start) == ("GG001", lsp.Position(1, 0))
    assert diagnostic.related_information[0].location.uri == notebook.cells[0][0]
    assert await pull(1) == []
    notebook.type_in(2, code_cells()[1].replace("y += 1", "y = y + 1"))
    assert await pull(2) == []


@pytest.mark.asyncio(loop_scope="function")
async def test_a_pulling_client_is_told_to_pull_again_when_an_edit_changes_another_cell(pulling_client: LanguageClient,
                                                                                        tmp_path):
    setup, train = code_cells()
    notebook = Notebook(pulling_client, tmp_path / "nb.ipynb", [setup, train])
    notebook.open()
    report = await pulling_client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(notebook.cells[1][0])))
    assert [d.code for d in report.items] == ["GG001"]
    refreshes = pulling_client.diagnostic_refresh_count
    notebook.type_in(1, setup.replace("y = x.exp()", "y = x * 2"))  # nothing saved any more: cell 2 is clean
    for _ in range(600):
        if pulling_client.diagnostic_refresh_count > refreshes:
            break
        await asyncio.sleep(0.05)
    assert pulling_client.diagnostic_refresh_count == refreshes + 1
    report = await pulling_client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(notebook.cells[1][0])))
    assert list(report.items) == []


@pytest.mark.asyncio(loop_scope="function")
async def test_a_half_written_cell_does_not_hide_the_others(client: LanguageClient, tmp_path):
    setup, train = code_cells()
    notebook = Notebook(client, tmp_path / "nb.ipynb", [setup, "def half_written(x:\n    return x\n", train])
    notebook.open()
    await notebook.until({1: [], 2: ["GG000"], 3: ["GG001"]})


LEAF_CELL = "w = torch.zeros(3, requires_grad=True)\nw.add_(1)\n(w * 2).sum().backward()\n"


@pytest.mark.asyncio(loop_scope="function")
async def test_fix_all_fixes_the_notebook_in_its_cells(client: LanguageClient, tmp_path):
    setup, train = code_cells()
    cells = [setup, train, LEAF_CELL]
    assert run_in_order(as_ipynb(tmp_path / "proof.ipynb", cells))["proof.ipynb"]["cell"] == 2
    notebook = Notebook(client, tmp_path / "nb.ipynb", cells)
    notebook.open()
    await notebook.until({1: [], 2: ["GG001"], 3: ["GG002"]})

    async def fix_all(number: int, kind: str) -> list[lsp.CodeAction]:
        return list(await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(notebook.cells[number - 1][0]),
            range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
            context=lsp.CodeActionContext(diagnostics=[], only=[kind]))) or ())

    [action] = await fix_all(1, "notebook.source.fixAll")  # VS Code's notebook-level kind: the whole notebook
    assert (action.kind, action.title) == ("notebook.source.fixAll.gradguard",
                                           "gradguard: fix all safely fixable problems")
    assert action.edit.changes is None
    assert [(change.text_document.uri, change.text_document.version, [(e.range, e.new_text) for e in change.edits])
            for change in action.edit.document_changes] == [
        (notebook.cells[1][0], 1, [(lsp.Range(lsp.Position(1, 0), lsp.Position(2, 0)),
                                    "y = y + 1  # expect: GG001\n")]),
        (notebook.cells[2][0], 1, [(lsp.Range(lsp.Position(1, 0), lsp.Position(2, 0)),
                                    "with torch.no_grad():\n    w.add_(1)\n")])]
    fixed = apply_to_cells(notebook.cells, action.edit)
    assert fixed == [setup, train.replace("y += 1", "y = y + 1"),
                     LEAF_CELL.replace("w.add_(1)", "with torch.no_grad():\n    w.add_(1)")]
    assert run_in_order(as_ipynb(tmp_path / "fixed.ipynb", fixed))["fixed.ipynb"]["error"] is None

    # `source.fixAll`, which VS Code asks of every cell at once on save: each cell gets its own edits
    assert await fix_all(1, "source.fixAll") == []
    by_cell = [await fix_all(number, "source.fixAll") for number in (2, 3)]
    assert [[a.kind for a in actions] for actions in by_cell] == [["source.fixAll.gradguard"]] * 2
    assert [change for [a] in by_cell for change in a.edit.document_changes] == list(action.edit.document_changes)

    notebook.type_in(2, fixed[1])
    notebook.type_in(3, fixed[2])
    await notebook.until({1: [], 2: [], 3: []})
    assert await fix_all(1, "notebook.source.fixAll") == []


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "gradguard", "lsp"]))
async def trusted_client(lsp_client: LanguageClient):
    """VS Code in a trusted workspace, whose Python is this one (it has torch)."""
    capabilities = client_capabilities("visual-studio-code")
    capabilities.notebook_document = lsp.NotebookDocumentClientCapabilities(
        synchronization=lsp.NotebookDocumentSyncClientCapabilities())
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=capabilities, initialization_options={
        "trusted": True, "interpreter": sys.executable, "verify": {"device": "cpu"}}))
    yield
    await lsp_client.shutdown_session()


GATE_CELL = ("from torch import nn\n\n\nclass Gate(nn.Module):\n"
             "    def forward(self, x):\n        return torch.sigmoid(x)\n")


@pytest.mark.asyncio(loop_scope="function")
async def test_the_verify_lens_goes_on_its_cell_and_runs_the_notebook(trusted_client: LanguageClient, tmp_path):
    setup, train = code_cells()
    cells = [setup, GATE_CELL, train]
    notebook = Notebook(trusted_client, as_ipynb(tmp_path / "nb.ipynb", cells), cells)
    notebook.open()
    await notebook.until({1: [], 2: [], 3: ["GG001"]})
    lenses = [await trusted_client.text_document_code_lens_async(lsp.CodeLensParams(
        text_document=lsp.TextDocumentIdentifier(uri))) for uri, _ in notebook.cells]
    assert [[(lens.range.start.line, lens.command.title, lens.command.command, list(lens.command.arguments))
             for lens in cell_lenses] for cell_lenses in lenses] == [
        [], [(3, "Verify in-place safety", "gradguard.verify", [notebook.uri, "Gate"])],
        [(0, "Verify in-place safety", "gradguard.verify", [notebook.uri])]]

    result = await trusted_client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="gradguard.verify", arguments=list(lenses[2][0].command.arguments)))
    assert [(f["code"], f["cell"], f["line"], f["origin"]) for f in result["findings"]] == [("GG001", 3, 2, "both")]
    [diagnostic] = notebook.shown()[3]  # published to the cell before the command answered
    assert diagnostic.range.start == lsp.Position(1, 0)
    assert diagnostic.message.endswith("Confirmed by running it on cpu."), diagnostic.message
    assert notebook.shown()[1] == notebook.shown()[2] == []
    from_a_cell = await trusted_client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="gradguard.verify", arguments=[notebook.cells[0][0]]))  # "Verify Current Module" in a cell
    assert from_a_cell["findings"] == result["findings"]
    assert [[d.code for d in notebook.shown()[n]] for n in (1, 2, 3)] == [[], [], ["GG001"]]  # still in cell 3


@pytest.mark.asyncio(loop_scope="function")
async def test_a_cell_ending_inside_a_bracket_does_not_reach_into_the_next(client: LanguageClient, tmp_path):
    """Each cell is a parse unit, as a kernel compiles it: `[y,` at the end of one cell and `y])`
    in the next parse together, but each is a syntax error of its own cell."""
    setup, train = code_cells()
    notebook = Notebook(client, tmp_path / "nb.ipynb", [setup, "z = torch.cat([y,\n", "y])\n", train])
    notebook.open()
    await notebook.until({1: [], 2: ["GG000"], 3: ["GG000"], 4: ["GG001"]})
    shown = notebook.shown()
    assert [(d.range, d.message) for n in (2, 3) for d in shown[n]] == [
        (lsp.Range(lsp.Position(0, 14), lsp.Position(0, 15)),
         "'[' was never closed: gradguard skips line 1 until it parses; the rest of the file is analysed"),
        (lsp.Range(lsp.Position(0, 1), lsp.Position(0, 2)),
         "unmatched ']': gradguard skips line 1 until it parses; the rest of the file is analysed")]
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(notebook.cells[1][0]), position=lsp.Position(0, 15)))
    assert hover is None  # `y` in a cell that does not parse: nothing is known of it


@pytest.mark.asyncio(loop_scope="function")
async def test_a_cell_that_stops_parsing_stands_as_its_last_version_that_did(client: LanguageClient, tmp_path):
    """Typing in a cell breaks it for a moment: the later cells keep what it last bound (here, the
    clone that makes `y += 1` safe), so no finding comes and goes while the user types."""
    setup, train = code_cells()
    proof = [setup, "y = y.clone()\n", train]
    assert run_in_order(as_ipynb(tmp_path / "proof.ipynb", proof))["proof.ipynb"]["error"] is None
    assert run_in_order(as_ipynb(tmp_path / "unsafe.ipynb", [setup, "", train]))["unsafe.ipynb"]["cell"] == 3
    notebook = Notebook(client, tmp_path / "nb.ipynb", proof)
    notebook.open()
    assert await notebook.diagnostics() == {1: [], 2: [], 3: []}
    notebook.type_in(2, "y = y.clone()\nz = torch.cat([y,\n")
    await notebook.until({1: [], 2: ["GG000"], 3: []})
    await asyncio.sleep(0.5)  # cell 3 would be published after cell 2 in the same round
    assert {n: [d.code for d in found] for n, found in notebook.shown().items()} == {1: [], 2: ["GG000"], 3: []}
    assert notebook.shown()[2][0].range == lsp.Range(lsp.Position(1, 14), lsp.Position(1, 15))
    notebook.type_in(2, "y = y.clone()\nz = torch.cat([y, y])\n")
    await notebook.until({1: [], 2: [], 3: []})
    notebook.type_in(2, "z = torch.cat([y, y])\n")  # the clone is gone: `y += 1` changes what exp saved
    await notebook.until({1: [], 2: [], 3: ["GG001"]})


@pytest.mark.asyncio(loop_scope="function")
async def test_no_quick_fix_edits_a_cell_that_does_not_parse(client: LanguageClient, tmp_path):
    """While the cell that saved the tensor does not parse, the finding it explains stays, but its
    fix that would clone there is not offered: that cell's text is not the one analysed."""
    notebook = Notebook(client, tmp_path / "nb.ipynb", [
        "import torch\nx = torch.randn(4, requires_grad=True)\n", "y = x.exp()\n", "y += 1\ny.sum().backward()\n"])
    notebook.open()
    await notebook.until({1: [], 2: [], 3: ["GG001"]})

    async def fixes() -> list[str]:
        [diagnostic] = notebook.shown()[3]
        actions = await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(notebook.cells[2][0]), range=diagnostic.range,
            context=lsp.CodeActionContext(diagnostics=[diagnostic])))
        return [action.title for action in actions if action.kind == lsp.CodeActionKind.QuickFix]

    assert any("Clone" in title for title in await fixes())
    notebook.type_in(2, "y = x.exp()\nz = torch.cat([y,\n")
    await notebook.until({1: [], 2: ["GG000"], 3: ["GG001"]})
    await asyncio.sleep(0.5)  # cell 3's diagnostic of this version (its data names the version)
    assert await fixes() == ["gradguard: Rewrite out of place: `y = y + 1`", "gradguard: disable GG001 for this line"]


@pytest.mark.asyncio(loop_scope="function")
async def test_a_notebook_file_open_as_text_that_is_no_notebook_gets_gg000_saying_why(client: LanguageClient, tmp_path):
    """An editor without notebook sync opens the `.ipynb` file's JSON: one that is no notebook was
    analysed as Python (nothing found); it is unreadable, as `gradguard check` reports it."""
    uri = (tmp_path / "nb.ipynb").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="json", version=1, text='{"cells": 5}')))
    for _ in range(600):
        if uri in client.diagnostics:
            break
        await asyncio.sleep(0.05)
    [diagnostic] = client.diagnostics[uri]
    assert (diagnostic.code, diagnostic.range, diagnostic.severity, diagnostic.message) == (
        "GG000", lsp.Range(lsp.Position(0, 0), lsp.Position(0, 1)), lsp.DiagnosticSeverity.Error,
        'gradguard could not read this file: not a notebook: its "cells" is not a list')
