"""`gradguard lsp`: diagnostics, quick fixes and hovers over the Language Server Protocol.

Handlers stay thin: they convert, schedule and publish. Each change schedules an analysis of
an immutable snapshot (uri, version, text) off the event loop; when it finishes, its results
are published only if the document is still at that version (the latest change wins).

When analyses run is `scheduler.py`'s business; what the editor's settings say is
`settings.py`'s; the `gradguard.verify` command is `verify_command.py`'s, which sees the server
only as a `VerifyHost`. A synced notebook is analysed under its own URI as one program
(`notebooks.py`); its findings are published, fixed and hovered in its cells.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from gradguard import __version__
from gradguard.analysis import budget
from gradguard.analysis.budget import Budget, Cancelled
from gradguard.analysis.project import ProjectIndex, ReadingInterrupted
from gradguard.config import ConfigError, ProjectSettings, Settings
from gradguard.engine import (
    OpenDocument,
    broken_cells,
    fix_document,
    fix_notebook,
    notebook_text_findings,
    project_index,
)
from gradguard.findings import Applicability, Finding, Fix, Position, Span
from gradguard.fixes.noqa import lines_ending_in_strings, noqa_edit
from gradguard.knowledge import ops
from gradguard.lsp import debug_info, verify_command
from gradguard.lsp import notebooks
from gradguard.lsp.convert import to_code_action, to_diagnostic, to_range, to_workspace_edit
from gradguard.lsp.notebooks import OpenNotebook
from gradguard.lsp.hover import rule_hover, value_hover
from gradguard.lsp.protocol import AnsweringProtocol, LspWorkspace, serve_stdio, serve_tcp, warm_up
from gradguard.lsp.scheduler import Scheduler
from gradguard.lsp.settings import EditorSettings, EditorVerify, read_editor_settings
from gradguard.project_python import InterpreterError, find_interpreter, runs_here
from gradguard.source.files import is_notebook
from gradguard.source.lines import lines_of
from gradguard.source.notebook import Notebook
from gradguard.source.parser import collector_paused

FIX_ALL = "source.fixAll.gradguard"
NOTEBOOK_FIX_ALL = "notebook.source.fixAll.gradguard"  # VS Code's notebook-level kind: asked once, for the notebook
FIX_ALL_TITLE = "gradguard: fix all safely fixable problems"
CONFIG_FILES = ("pyproject.toml",)  # what the settings are read from (`config.py`): watched for changes


@dataclass
class Analysed:
    """The findings of one version of one document."""

    version: int | None
    text: str
    findings: list[Finding]


class GradguardServer(LanguageServer):
    """The server's state: settings, the project index, the open documents and their latest findings."""

    def __init__(self) -> None:
        super().__init__("gradguard", __version__, protocol_cls=AnsweringProtocol,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=notebooks.SYNC)
        self.editor = EditorSettings()
        self.pulls_settings = False  # the client sent no initializationOptions: ask it (workspace/configuration)
        self.pull = False  # the client pulls diagnostics (textDocument/diagnostic) instead of receiving them
        self.projects = ProjectSettings()
        self._settings: dict[str, Settings] = {}  # per file path: its settings (`settings_for`), asked at every keystroke
        self._settings_key: tuple | None = None  # what they were read under: the editor's settings, the projects, the root
        self.event_loop: asyncio.AbstractEventLoop | None = None  # the server's, once initialized
        self.project = self.new_project(None)
        self.analysed: dict[str, Analysed] = {}
        self.opened: dict[str, OpenDocument] = {}  # per open document: its blocks and its previous analysis
        self.settling: dict[str, set[Path]] = {}  # per document whose imports are being read: those still to read
        self.tasks: dict[str, asyncio.Task] = {}
        self.settle_tasks: dict[str, asyncio.Task] = {}  # per document: `settle_in`, cancelled when it closes
        self.notebooks: dict[str, OpenNotebook] = {}  # per synced notebook: its latest snapshot
        # per synced notebook: its changes counted. VS Code leaves a notebook's version as it was when
        # only a cell's text changes, so the server numbers the notebook's versions itself
        self.revisions: dict[str, int] = {}
        self.cells_shown: dict[str, tuple] = {}  # per notebook cell: its version and findings as last published
        self.scheduler = Scheduler()
        self.settings_changes = 0  # counted by `refresh_all`: an analysis that started before one is run again
        self.token: str | None = None  # what a client must present to run code (set for TCP by `start`)
        self.client_name = "unknown"  # its clientInfo, for the debug information

    def new_project(self, python: str | None) -> ProjectIndex:
        """A project index for the interpreter `python`. jedi's first query takes seconds: it is
        asked in a process of its own, never before an answer; each name it places analyses the
        open documents again."""
        project = project_index(python=python)
        project.answer_in_background(self.jedi_answered)
        return project

    def jedi_answered(self) -> None:
        """(From another thread.) jedi placed a name: analyse the open documents again."""
        if self.event_loop is not None and not self.scheduler.stopping:
            self.event_loop.call_soon_threadsafe(self.analyse_afresh)

    def analyse_afresh(self) -> None:
        """Every open document analysed again from scratch (what it imports may mean more now)."""
        for opened in self.opened.values():
            opened.forget()
        refresh_all(self)

    def shutdown(self) -> None:
        """The client asked to shut down, or went away: stop the running analysis at once."""
        self.scheduler.stopping = True
        self.project.close()
        super().shutdown()

    def client_supports(self, *path: str) -> bool:
        value: object = self.client_capabilities
        for name in path:
            value = getattr(value, name, None)
            if value is None:
                return False
        return bool(value)

    def open_document(self, uri: str) -> TextDocument | None:
        """The open document at `uri`, or None for a URI the client never opened (pygls keeps
        documents under the percent-decoded URI)."""
        return self.workspace.text_documents.get(unquote(uri))

    def notebook(self, uri: str) -> OpenNotebook | None:
        """The synced notebook at `uri` as it is now (a snapshot per version), None if there is none."""
        synced = self.workspace.get_notebook_document(notebook_uri=uri)
        if synced is None:
            self.notebooks.pop(uri, None)
            return None
        known = self.notebooks.get(uri)
        revision = self.revisions.get(uri, 0)
        if known is None or known.version != revision:
            known = self.notebooks[uri] = notebooks.open_notebook(self.workspace, uri, revision, known)
        return known

    def snapshot(self, uri: str) -> tuple[int | None, str, str] | None:
        """(version, text, path) of the open document or synced notebook (its program) at `uri`."""
        if (notebook := self.notebook(uri)) is not None:
            return notebook.version, notebook.program, notebook.path
        document = self.open_document(uri)
        return None if document is None else (document.version, document.source, document.path)

    async def analysed_now(self, uri: str) -> Analysed | None:
        """The analysis of what is open at `uri` now, waiting for it when a change is still being
        analysed (a save's fix-all comes right after the last keystroke); None when closed meanwhile."""
        analysed = self.analysed.get(uri)
        if analysed is None or analysed.version != self.version_of(uri):
            self.schedule(uri)
            try:
                await asyncio.shield(self.tasks[uri])
            except Exception:  # the analysis failed (logged where it ran): nothing to answer with
                return None
            analysed = self.analysed.get(uri)
        return analysed if analysed is not None and analysed.version == self.version_of(uri) else None

    def version_of(self, uri: str) -> int | None | bool:
        """The version of what is open at `uri` (False when nothing is): cheap, asked at analysis steps."""
        if self.workspace.get_notebook_document(notebook_uri=uri) is not None:
            return self.revisions.get(uri, 0)
        document = self.open_document(uri)
        return False if document is None else document.version

    def debug_snapshot(self) -> debug_info.Snapshot:
        """What `gradguard.printDebugInformation` reports, as it is now."""
        uris = [folder.uri for folder in self.workspace.folders.values()] or \
            ([self.workspace.root_uri] if self.workspace.root_uri else [])
        folders = {path: self.settings_for(path) for uri in uris if (path := to_fs_path(uri)) is not None}
        environment = self.project.environment
        return debug_info.Snapshot(
            client=self.client_name, position_encoding=str(getattr(encoding := self.workspace.position_encoding, "value", encoding)),
            pulls_diagnostics=self.pull, project_python=environment.python,
            project_search_path=environment.search_path, editor=self.editor, folders=folders,
            documents={uri: document.version for uri, document in self.workspace.text_documents.items()},
            notebooks=dict(self.revisions))

    def report_server_error(self, error: Exception, source: object) -> None:
        """Malformed notifications and the like go to the log, not to a pop-up in the user's editor."""
        self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, f"gradguard: {error!r}"))

    def diagnostics(self, document: TextDocument, findings: list[Finding]) -> list[lsp.Diagnostic]:
        """`findings` as LSP diagnostics of `document`, with related locations if the client takes them."""
        related = self.client_supports("text_document", "publish_diagnostics", "related_information") or \
            (self.pull and self.client_supports("text_document", "diagnostic", "related_document_support"))
        return [to_diagnostic(document, f, i, related) for i, f in enumerate(findings)]

    def cell_diagnostics(self, notebook: OpenNotebook, number: int, analysed: Analysed) -> list[lsp.Diagnostic]:
        """The diagnostics of cell `number` of `notebook`, from the notebook's findings."""
        return self._cell_diagnostics(notebook, number, analysed.version, [
            (i, f) for i, f in enumerate(notebook.localised(analysed.findings)) if f.span.cell == number])

    def _cell_diagnostics(self, notebook: OpenNotebook, number: int, version: int | None,
                          findings: list[tuple[int, Finding]]) -> list[lsp.Diagnostic]:
        """`findings` (cell-local, with their index among the notebook's) as diagnostics of cell `number`."""
        document = notebook.cell_document(number)
        if document is None or not findings:
            return []
        related = self.client_supports("text_document", "publish_diagnostics", "related_information") or \
            (self.pull and self.client_supports("text_document", "diagnostic", "related_document_support"))
        place = partial(notebooks.in_cell, notebook=notebook)
        return [to_diagnostic(document, f, i, related, version, place) for i, f in findings]

    def publish(self, uri: str, analysed: Analysed) -> None:
        """Keep `analysed` as the document's findings; push them, unless the client pulls them."""
        self.analysed[uri] = analysed
        notebook = self.notebook(uri)
        if notebook is not None and notebook.version == analysed.version:
            by_cell: dict[int | None, list[tuple[int, Finding]]] = {}
            for i, f in enumerate(notebook.localised(analysed.findings)):
                by_cell.setdefault(f.span.cell, []).append((i, f))
            others_changed = False
            for number, cell in enumerate(notebook.cells, 1):
                if notebook.model.cells[number - 1].kind != "code":
                    continue
                found = by_cell.get(number, [])
                before = self.cells_shown.get(cell.uri)
                if not found and before is not None and before[0] == cell.version and not before[1]:
                    continue  # a cell neither edited nor with findings: a keystroke publishes one or two cells
                diagnostics = self._cell_diagnostics(notebook, number, analysed.version, found)
                shown = (cell.version, [(d.range, d.message, d.code, d.severity, d.related_information)
                                        for d in diagnostics])
                if before == shown:
                    continue
                self.cells_shown[cell.uri] = shown
                if not self.pull:
                    self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                        uri=cell.uri, version=cell.version, diagnostics=diagnostics))
                elif before is not None and before[0] == cell.version:
                    others_changed = True  # an edit elsewhere changed this cell's findings: the client pulls edited cells only
            if others_changed:
                self.refresh()
            return
        document = self.open_document(uri)
        if not self.pull and document is not None:
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                uri=uri, version=analysed.version, diagnostics=self.diagnostics(document, analysed.findings)))

    def refresh(self) -> None:
        """Tell a pulling client to ask for diagnostics again."""
        if self.pull and self.client_supports("workspace", "diagnostics", "refresh_support"):
            self.workspace_diagnostic_refresh(None)

    def publish_findings(self, uri: str, version: int | None, text: str, findings: list[Finding]) -> None:
        """`VerifyHost`: publish findings made outside the analysis (a verification run)."""
        self.publish(uri, Analysed(version, text, findings))
        self.refresh()

    def editor_verify(self) -> EditorVerify:
        """`VerifyHost`: the editor's settings for running code."""
        return self.editor.verify

    def required_token(self) -> str | None:
        """`VerifyHost`: the token a client must present to run code."""
        return self.token

    def cell_in_notebook(self, cell_uri: str) -> tuple[str, Notebook, int] | None:
        """`VerifyHost`: the synced notebook holding the cell at `cell_uri`, its program, the cell's number."""
        notebook_uri = notebooks.notebook_of_cell(self.workspace, cell_uri)
        notebook = self.notebook(notebook_uri) if notebook_uri is not None else None
        number = notebook.number_of(cell_uri) if notebook is not None else None
        return None if number is None else (notebook.uri, notebook.model, number)

    def schedule(self, uri: str) -> None:
        """Make sure the document's latest version gets analysed and published.

        One analysis per document runs at a time; changes that arrive meanwhile are picked up
        when it ends (the latest wins, intermediate versions are never analysed).
        """
        task = self.tasks.get(uri)
        if task is None or task.done():
            self.tasks[uri] = asyncio.ensure_future(self.keep_up(uri))

    async def keep_up(self, uri: str) -> None:
        while (version := self.version_of(uri)) is not False:
            done = await self.analyse_and_publish(uri)
            latest = self.version_of(uri)
            if latest is False or (done and latest == version):
                return

    async def analyse_and_publish(self, uri: str) -> bool:
        """Analyse the document's current version and publish its diagnostics; False when the
        analysis was stopped (see `scheduler.py`) and has to run again."""
        snapshot = self.snapshot(uri)
        if snapshot is None:
            return True
        version, text, path = snapshot
        settings_changes = self.settings_changes
        outcome = await self.scheduler.analyse(uri, self.analyse, uri, path, text, version)
        if outcome is None:
            return False
        findings, first = outcome
        notebook = self.notebook(uri)
        if notebook is not None and notebook.version == version and notebook.model.broken:
            findings = [*broken_cells(path, notebook.model, self.settings_for(path)),
                        *notebook.outside_broken(findings)]
        if first:  # the user is about to read them, and likely to type: background work waits
            self.scheduler.active()
            self.settle_tasks[uri] = asyncio.ensure_future(self.settle_in(uri))
        if self.settings_changes != settings_changes:
            return False  # it read the settings before they changed (pushed while it ran): again, with the new ones
        if self.version_of(uri) != version:
            return True  # outdated (or closed): the newer change's analysis publishes
        self.publish(uri, Analysed(version, text, findings))
        return True

    def unwanted(self, uri: str, version: int | None, started: float) -> bool:
        """Whether the analysis of `uri` at `version`, running since `started`, should stop now
        (asked by the analysis thread at its steps; see `Scheduler.should_stop`)."""
        current = self.version_of(uri)
        if current is False:
            return True
        return self.scheduler.should_stop(uri, started, outdated=current != version)

    def settings_for(self, path: str) -> Settings:
        """The editor's settings when it sent some (the CLI's keys), else the file's pyproject.toml."""
        key = (self.editor, self.projects, self.workspace.root_path)
        if self._settings_key is None or any(a is not b for a, b in zip(key, self._settings_key)):
            self._settings_key, self._settings = key, {}  # changed settings, a pyproject.toml saved: read again
        if (known := self._settings.get(path)) is None:
            root = Path(self.workspace.root_path) if self.workspace.root_path else None
            known = self._settings[path] = self.editor.for_path(Path(path), self.projects, root)
        return known

    def analyse(self, uri: str, path: str, text: str, version: int | None) -> tuple[list[Finding], bool] | None:
        """The findings for `text`, and whether this was the document's first analysis; None when
        the analysis was stopped for more urgent work. Until the document has settled in
        (`read_imports`), its analyses do not wait for what it imports: names from files not
        read yet stay unknown (a miss, never a false alarm), and those files are queued to be read."""
        started = time.monotonic()
        try:
            settings = self.settings_for(path)
            if settings.excluded(Path(path)):
                return [], False
            if is_notebook(path) and self.workspace.get_notebook_document(notebook_uri=uri) is None:
                return notebook_text_findings(path, text, settings), False
            opened = self.opened.get(uri)
            first = opened is None
            if opened is None:
                opened = self.opened[uri] = OpenDocument(path)
            cancelled = partial(self.unwanted, uri, version, started)
            if uri not in self.settling and not first:
                findings = opened.analyse(text, settings, self.project, cancelled)
            else:
                with collector_paused(), self.project.without_reading() as not_read:
                    findings = opened.analyse(text, settings, self.project, cancelled)
                    if first:  # its tree lives while the document is open: out of the collector's way at once
                        gc.freeze()
                if not_read:
                    self.settling.setdefault(uri, set()).update(not_read)
            self.scheduler.cost(uri, time.monotonic() - started)
            return findings, first
        except Cancelled:
            self.scheduler.cost(uri, time.monotonic() - started, stopped=True)
            if first and uri in self.opened and self.opened[uri] is opened:
                del self.opened[uri]  # its first diagnostics are still to come
            return None
        except ConfigError as error:
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, f"gradguard settings: {error}"))
        except Exception as error:  # the server never crashes on a document
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error,
                                                         f"gradguard could not analyse {path}: {error!r}"))
        return [], False

    def read_next_import(self, uri: str, quiet_since: float) -> bool:
        """Read one file the settling document imports (and what that file needs in turn), unless
        a change came after `quiet_since`: True. When none is left, or the document was closed, it
        has settled in (its next analysis starts afresh, reading what it imports): False."""
        pending = self.settling.get(uri)
        if pending and uri in self.opened:
            file = next(iter(pending))
            def changed() -> bool:
                return self.scheduler.stopping or self.scheduler.last_activity != quiet_since

            try:
                with self.project.interruptible(changed), budget.using(Budget(cancelled=changed)):
                    self.project.definitions_of(file)
            except (ReadingInterrupted, Cancelled):
                return True  # a change came in: its analysis goes first, this file is read again later
            pending.discard(file)
            return True
        self.settling.pop(uri, None)
        if (opened := self.opened.get(uri)) is not None:
            opened.forget()
        return False

    async def settle_in(self, uri: str) -> None:
        """After a document's first diagnostics: read the files it imports, if any, and analyse it
        again; prepare it for the first keystroke; then put what is in memory now out of the
        garbage collector's way."""
        if uri in self.settling:
            await self.read_imports(uri)
        async with self.scheduler.background_turn():
            await self.scheduler.run(self.prepare, uri)
        await self.scheduler.settle_memory()

    def prepare(self, uri: str) -> None:
        """`OpenDocument.prepare` for the document at `uri`, if it is still open."""
        if (opened := self.opened.get(uri)) is not None:
            since = self.scheduler.last_activity
            opened.prepare(self.project, lambda: self.scheduler.stopping or self.scheduler.last_activity != since)

    async def read_imports(self, uri: str) -> None:
        """Read the files a document imports (with `$/progress`), one executor job each, while the
        user does not type; then analyse it again. Background jobs of all documents take turns, one
        at a time: a change made meanwhile waits for one of them at most."""
        count = len(self.settling.get(uri, ()))
        title = f"gradguard: reading {count} imported file{'s' if count > 1 else ''}"
        token = f"gradguard-imports-{uri}"
        progress = self.client_supports("window", "work_done_progress")
        if progress:
            try:
                await self.work_done_progress.create_async(token)
                self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title, cancellable=False))
            except Exception:  # a client that refuses the token still gets its diagnostics
                progress = False
        more = True
        try:
            while more:
                async with self.scheduler.background_turn():
                    more = await self.scheduler.run(self.read_next_import, uri, self.scheduler.last_activity)
        finally:  # the document may have been closed meanwhile: its progress ends all the same
            if progress:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd())
                self.work_done_progress.tokens.pop(token, None)  # pygls keeps it, and refuses it when the document opens again
        if uri not in self.opened:
            return
        # The analyses submitted before the last job have run, and their tasks moved on, before
        # this resumes (the executor and the loop are first in, first out): from here on, every
        # analysis sees what the document imports.
        async with self.scheduler.background_turn():
            self.analysed.pop(uri, None)
            self.schedule(uri)
            await asyncio.shield(self.tasks[uri])
        self.refresh()


server = GradguardServer()


@server.feature(lsp.INITIALIZE)
def initialize(ls: GradguardServer, params: lsp.InitializeParams) -> None:
    ls.workspace.__class__ = LspWorkspace  # pygls made it a moment ago, before any document
    apply_settings(ls, params.initialization_options)
    ls.pulls_settings = params.initialization_options is None
    text_document = params.capabilities.text_document
    ls.pull = text_document is not None and text_document.diagnostic is not None
    if params.client_info is not None:
        ls.client_name = f"{params.client_info.name} {params.client_info.version or ''}".strip()


@server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC, lsp.DiagnosticOptions(
    identifier="gradguard", inter_file_dependencies=True, workspace_diagnostics=False))
async def pull_diagnostics(ls: GradguardServer, params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
    """Pull diagnostics: the report of the document's current version (waiting for its analysis)."""
    uri = params.text_document.uri
    document = ls.open_document(uri)
    notebook_uri = notebooks.notebook_of_cell(ls.workspace, uri)
    analysed_uri = notebook_uri or uri
    if document is None:
        return lsp.RelatedFullDocumentDiagnosticReport(items=[])
    analysed = ls.analysed.get(analysed_uri)
    if analysed is None or analysed.version != ls.version_of(analysed_uri):
        ls.schedule(analysed_uri)
        await asyncio.shield(ls.tasks[analysed_uri])
        analysed = ls.analysed.get(analysed_uri)
    if analysed is None:
        return lsp.RelatedFullDocumentDiagnosticReport(items=[])
    result_id = f"{analysed.version}:{id(analysed)}"
    if params.previous_result_id == result_id:
        return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    if notebook_uri is not None:
        notebook = ls.notebook(notebook_uri)
        number = notebook.number_of(uri) if notebook is not None else None
        items = ls.cell_diagnostics(notebook, number, analysed) if number is not None else []
        return lsp.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)
    return lsp.RelatedFullDocumentDiagnosticReport(items=ls.diagnostics(document, analysed.findings),
                                                   result_id=result_id)


def refresh_all(ls: GradguardServer) -> None:
    """Settings changed without an edit: analyse again (a running analysis too, once it ends), and
    tell pulling clients to ask again."""
    ls.settings_changes += 1
    for uri in list(ls.analysed):
        ls.analysed.pop(uri, None)
        ls.schedule(uri)
    ls.refresh()


def environment_python(root: Path | None) -> str | None:
    """Without the editor's `python`: the project's interpreter as `check` finds it for the workspace
    (`VIRTUAL_ENV`, its `.venv`, `CONDA_PREFIX`, ...), whose libraries are read from its files, so
    that nothing of a workspace, trusted or not, runs; None for gradguard's own (its `sys.path`)."""
    try:
        found = find_interpreter(root if root is not None else Path.cwd())
    except InterpreterError:
        return None
    return None if runs_here(found.executable) else found.executable


def apply_settings(ls: GradguardServer, options: object) -> None:
    """`initializationOptions` / `workspace/didChangeConfiguration`: read once into `ls.editor`
    (`lsp/settings.py`); invalid rule settings are shown and the previous ones kept."""
    ls.editor, error = read_editor_settings(options, ls.editor)
    root = Path(ls.workspace.root_path) if ls.workspace.root_path else None
    python = ls.editor.python or environment_python(root)
    if python != ls.project.environment.python:  # another interpreter: other libraries (analysed again)
        ls.project.close()
        ls.project = ls.new_project(python)
        environment = ls.project.environment  # its search path (read from files): never on a keystroke
        threading.Thread(target=lambda: environment.search_path, name="gradguard-environment", daemon=True).start()
    if error is not None:
        ls.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, f"gradguard settings: {error}"))


async def pull_settings(ls: GradguardServer) -> None:
    """`workspace/configuration` for the section "gradguard" (what Neovim's `settings`, Eglot's
    `workspace-configuration` and Helix's `config` hold), for clients that send none themselves.
    Settings pushed while the answer is on its way are newer than it: the answer is then dropped."""
    if not ls.client_supports("workspace", "configuration"):
        return
    asked_with = ls.editor
    try:
        answer = await ls.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="gradguard")]))
    except Exception as error:  # a client that cannot answer keeps the pyproject.toml settings
        ls.window_log_message(lsp.LogMessageParams(lsp.MessageType.Log, f"gradguard: no configuration: {error!r}"))
        return
    if answer and isinstance(answer[0], dict) and ls.editor is asked_with:
        apply_settings(ls, answer[0])
        refresh_all(ls)


async def watch_config_files(ls: GradguardServer) -> None:
    """Ask the client to tell of changes to the config files made outside the editor (a `git pull`,
    another editor): `workspace/didChangeWatchedFiles`, registered dynamically where it can be."""
    if not ls.client_supports("workspace", "did_change_watched_files", "dynamic_registration"):
        return
    watchers = [lsp.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILES]
    try:
        await ls.client_register_capability_async(lsp.RegistrationParams([lsp.Registration(
            id="gradguard-config-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
    except Exception as error:  # the client keeps what it watches itself; a save in the editor still counts
        ls.window_log_message(lsp.LogMessageParams(lsp.MessageType.Log, f"gradguard: no file watching: {error!r}"))


@server.feature(lsp.INITIALIZED)
async def initialized(ls: GradguardServer, params: lsp.InitializedParams) -> None:
    ls.event_loop = asyncio.get_running_loop()
    warm_up(ls.protocol._converter)  # pygls keeps its converter to itself
    if ls.pulls_settings:  # asked at once: a push that comes before the answer is the newer word
        await pull_settings(ls)
    await watch_config_files(ls)


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: GradguardServer, params: lsp.DidChangeConfigurationParams) -> None:
    if isinstance(params.settings, dict) and params.settings:
        apply_settings(ls, params.settings)
        refresh_all(ls)
    elif ls.pulls_settings:  # "something changed, ask me" (the pull model)
        await pull_settings(ls)


@server.feature(lsp.SHUTDOWN)
def shutdown(ls: GradguardServer, params: None) -> None:
    """No analysis runs on after a shutdown request: the running one stops at its next step."""
    ls.scheduler.stopping = True


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GradguardServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GradguardServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.scheduler.active()
    ls.schedule(params.text_document.uri)


def is_config_file(uri: str) -> bool:
    """Whether `uri` names a file the settings are read from."""
    return uri.rsplit("/", 1)[-1] in CONFIG_FILES


def reload_config_files(ls: GradguardServer) -> None:
    """[tool.gradguard] may have changed: read the config files again, analyse the open documents again."""
    ls.projects = ProjectSettings()
    refresh_all(ls)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: GradguardServer, params: lsp.DidSaveTextDocumentParams) -> None:
    if is_config_file(params.text_document.uri):
        reload_config_files(ls)


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: GradguardServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    if any(is_config_file(change.uri) for change in params.changes):
        reload_config_files(ls)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GradguardServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.analysed.pop(uri, None)
    ls.settling.pop(uri, None)  # its `settle_in`, cancelled below, reads them no more
    if ls.opened.pop(uri, None) is not None:
        ls.scheduler.closed(uri)
    for task in (ls.tasks.pop(uri, None), ls.settle_tasks.pop(uri, None)):
        if task is not None:
            task.cancel()
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
def did_open_notebook(ls: GradguardServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
    ls.revisions[params.notebook_document.uri] = 1
    ls.schedule(params.notebook_document.uri)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
def did_change_notebook(ls: GradguardServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
    ls.scheduler.active()
    ls.revisions[params.notebook_document.uri] = ls.revisions.get(params.notebook_document.uri, 0) + 1
    structure = params.change.cells.structure if params.change.cells is not None else None
    for removed in (structure.did_close or []) if structure is not None else []:
        ls.cells_shown.pop(removed.uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=removed.uri, diagnostics=[]))
    ls.schedule(params.notebook_document.uri)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
def did_close_notebook(ls: GradguardServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
    uri = params.notebook_document.uri
    ls.notebooks.pop(uri, None)
    ls.revisions.pop(uri, None)
    did_close(ls, lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
    for cell in params.cell_text_documents:
        ls.cells_shown.pop(cell.uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
    code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL, NOTEBOOK_FIX_ALL], resolve_provider=True))
async def code_action(ls: GradguardServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """Quick fixes of the analysis in hand, and fix-all. As Ruff's server does, a request without
    `only` (VS Code's light bulb) gets every kind; there fix-all is offered when a finding has a safe
    fix, its edit made when the client resolves it (`codeAction/resolve`), where it can. Fix-all
    asked for by kind (on save), and any request the user made (Ctrl+.), wait for the analysis of
    the text as it is now, so that a save or a Ctrl+. right after typing is answered all the same."""
    uri = params.text_document.uri
    kinds = [getattr(k, "value", k) for k in params.context.only or ()]
    notebook_uri = notebooks.notebook_of_cell(ls.workspace, uri)
    analysed_uri = notebook_uri or uri
    asked = params.context.trigger_kind == lsp.CodeActionTriggerKind.Invoked
    if (asked or any(FIX_ALL.startswith(k) or NOTEBOOK_FIX_ALL.startswith(k) for k in kinds)) \
            and ls.version_of(analysed_uri) is not False:
        await ls.analysed_now(analysed_uri)
    if notebook_uri is not None:
        return cell_code_actions(ls, notebook_uri, params)
    analysed = ls.analysed.get(uri)
    document = ls.open_document(uri)
    if analysed is None or document is None or analysed.version != document.version:
        return []
    versioned = ls.client_supports("workspace", "workspace_edit", "document_changes")
    actions: list[lsp.CodeAction] = []
    if not kinds or any(k.startswith("quickfix") for k in kinds):
        diagnostics = ls.diagnostics(document, analysed.findings)
        for index in wanted_findings(analysed, params):
            finding = analysed.findings[index]
            own = diagnostics[index]
            for position, fix in enumerate(finding.fixes):
                preferred = position == 0 and fix.applicability is Applicability.SAFE
                actions.append(to_code_action(document, fix, own, preferred, versioned))  # never None in a file
            if (silence := noqa_action(document, finding, own)) is not None:
                actions.append(silence)
    if any(FIX_ALL.startswith(k) for k in kinds):  # asked for explicitly: it re-analyses the whole file
        actions += file_fix_all(ls, document, analysed)
    elif not kinds and safely_fixable(analysed.findings):
        actions += [deferred_fix_all(uri, analysed.version, FIX_ALL)] if resolves_edits(ls) \
            else file_fix_all(ls, document, analysed)
    return actions


def safely_fixable(findings: list[Finding]) -> bool:
    """Whether fix-all would change something: a finding has a safe fix."""
    return any(fix.applicability is Applicability.SAFE for finding in findings for fix in finding.fixes)


def resolves_edits(ls: GradguardServer) -> bool:
    """Whether the client asks for a code action's edit when it applies it (`codeAction/resolve`)."""
    support = ls.client_capabilities.text_document.code_action.resolve_support \
        if ls.client_supports("text_document", "code_action", "resolve_support") else None
    return support is not None and "edit" in support.properties


def deferred_fix_all(uri: str, version: int | None, kind: str) -> lsp.CodeAction:
    """Fix-all without its edit, which `codeAction/resolve` makes for the document (or cell) at `uri`
    while its analysis is at `version`."""
    return lsp.CodeAction(title=FIX_ALL_TITLE, kind=kind, data={"uri": uri, "version": version})


def file_fix_all(ls: GradguardServer, document: TextDocument, analysed: Analysed) -> list[lsp.CodeAction]:
    """Every safe fix of the file, as `gradguard check --fix` makes them, as one edit of its whole text."""
    fixed = fix_document(document.path, analysed.text, ls.settings_for(document.path), ls.project, unsafe=False)
    if fixed.text == analysed.text:
        return []
    lines = lines_of(analysed.text) or [""]
    end = Span(Position(1, 0), Position(len(lines), len(lines[-1]))) if not lines[-1].endswith(("\n", "\r")) \
        else Span(Position(1, 0), Position(len(lines) + 1, 0))
    edit = lsp.TextEdit(range=to_range(document, end), new_text=fixed.text)
    return [lsp.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL, edit=lsp.WorkspaceEdit(changes={document.uri: [edit]}))]


@server.feature(lsp.CODE_ACTION_RESOLVE)
def resolve_code_action(ls: GradguardServer, action: lsp.CodeAction) -> lsp.CodeAction:
    """The edit of a fix-all offered without it (`deferred_fix_all`), if the document is still at that version."""
    data = action.data if isinstance(action.data, dict) else {}
    uri, version = data.get("uri"), data.get("version")
    if action.edit is not None or not isinstance(uri, str):
        return action
    notebook_uri = notebooks.notebook_of_cell(ls.workspace, uri)
    analysed = ls.analysed.get(notebook_uri or uri)
    if analysed is None or analysed.version != version or ls.version_of(notebook_uri or uri) != version:
        return action  # edited since: the next request offers it again
    if notebook_uri is not None:
        notebook = ls.notebook(notebook_uri)
        number = notebook.number_of(uri) if notebook is not None else None
        made = cell_fix_all(ls, notebook, number, FIX_ALL) if number is not None else []
    else:
        document = ls.open_document(uri)
        made = file_fix_all(ls, document, analysed) if document is not None else []
    return made[0] if made else action


def cell_code_actions(ls: GradguardServer, notebook_uri: str, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """The code actions of a notebook's cell: its quick fixes, and fix-all when asked for by kind
    (or, without `only`, when the notebook has a safely fixable finding)."""
    analysed, notebook = ls.analysed.get(notebook_uri), ls.notebook(notebook_uri)
    if analysed is None or notebook is None or analysed.version != notebook.version:
        return []
    number = notebook.number_of(params.text_document.uri)
    document = notebook.cell_document(number) if number is not None else None
    if document is None:
        return []
    kinds = [getattr(k, "value", k) for k in params.context.only or ()]
    actions = cell_quick_fixes(ls, notebook, number, analysed, params) \
        if not kinds or any(k.startswith("quickfix") for k in kinds) else []
    if any(NOTEBOOK_FIX_ALL.startswith(k) for k in kinds):
        actions += cell_fix_all(ls, notebook, number, NOTEBOOK_FIX_ALL)
    elif any(FIX_ALL.startswith(k) for k in kinds):
        actions += cell_fix_all(ls, notebook, number, FIX_ALL)
    elif not kinds and safely_fixable(analysed.findings):
        actions += [deferred_fix_all(params.text_document.uri, analysed.version, FIX_ALL)] if resolves_edits(ls) \
            else cell_fix_all(ls, notebook, number, FIX_ALL)
    return actions


def cell_quick_fixes(ls: GradguardServer, notebook: OpenNotebook, number: int, analysed: Analysed,
                     params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """Quick fixes in cell `number`: their edits may reach into the earlier cell that saved
    the tensor (one workspace edit over both cells)."""
    document = notebook.cell_document(number)
    localised = notebook.localised(analysed.findings)
    diagnostics = {index: diagnostic for diagnostic in ls.cell_diagnostics(notebook, number, analysed)
                   for index in [diagnostic.data["index"]]}
    in_this_cell = Analysed(analysed.version, analysed.text,  # wanted_findings reads lines: this cell's only
                            [f if f.span.cell == number else replace(f, span=Span(Position(0, 0), Position(0, 0)))
                             for f in localised])
    versioned = ls.client_supports("workspace", "workspace_edit", "document_changes")
    place = partial(notebooks.in_cell, notebook=notebook)
    actions: list[lsp.CodeAction] = []
    for index in wanted_findings(in_this_cell, params):
        if index not in diagnostics:
            continue
        finding = localised[index]
        for position, fix in enumerate(finding.fixes):
            preferred = position == 0 and fix.applicability is Applicability.SAFE
            if (action := to_code_action(document, fix, diagnostics[index], preferred, versioned, place)) is not None:
                actions.append(action)
        if (silence := noqa_action(document, finding, diagnostics[index])) is not None:
            actions.append(silence)
    return actions


def cell_fix_all(ls: GradguardServer, notebook: OpenNotebook, number: int, kind: str) -> list[lsp.CodeAction]:
    """Every safe fix of the notebook, as `gradguard check --fix` makes them, in one workspace
    edit over its cells (`NOTEBOOK_FIX_ALL`); for `FIX_ALL`, only the edits of cell `number`: on
    save VS Code asks each cell for `source.fixAll` at once, and their answers together fix the notebook."""
    settings = ls.settings_for(notebook.path)
    edits = notebook.fix_all_edits(lambda model: fix_notebook(notebook.path, model, settings, ls.project,
                                                              unsafe=False)[0])
    if kind == FIX_ALL:
        edits = [edit for edit in edits if edit.span.cell == number]
    if not edits:
        return []
    versioned = ls.client_supports("workspace", "workspace_edit", "document_changes")
    edit = to_workspace_edit(notebook.cell_document(number), Fix(FIX_ALL_TITLE, Applicability.SAFE, tuple(edits)),
                             versioned, partial(notebooks.in_cell, notebook=notebook))
    return [] if edit is None else [lsp.CodeAction(title=FIX_ALL_TITLE, kind=kind, edit=edit)]


def wanted_findings(analysed: Analysed, params: lsp.CodeActionParams) -> list[int]:
    """The findings the client asks about: those its diagnostics carry (by `data.index`), or,
    for clients that send diagnostics back stripped (ALE), every finding on the requested lines."""
    indices = []
    for diagnostic in params.context.diagnostics:
        data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
        index = data.get("index")
        if isinstance(index, int) and 0 <= index < len(analysed.findings) and data.get("version") == analysed.version:
            indices.append(index)
    if indices:
        return sorted(set(indices))
    first, last = params.range.start.line + 1, params.range.end.line + 1
    return [i for i, f in enumerate(analysed.findings) if first <= f.span.start.line <= last]


def noqa_action(document: TextDocument, finding: Finding, diagnostic: lsp.Diagnostic) -> lsp.CodeAction | None:
    """"Disable CODE for this line": `# noqa: CODE` added (or the code added to the line's `# noqa:`)."""
    line = finding.span.start.line
    text = document.lines[line - 1].rstrip("\r\n") if line - 1 < len(document.lines) else ""
    edit = noqa_edit(text, line, [finding.code])
    if edit is None or line in lines_ending_in_strings(document.source):  # the whole file is read only then
        return None
    change = lsp.TextEdit(range=to_range(document, edit.span), new_text=edit.content)
    return lsp.CodeAction(title=f"gradguard: disable {finding.code} for this line", kind=lsp.CodeActionKind.QuickFix,
                          diagnostics=[diagnostic], edit=lsp.WorkspaceEdit(changes={document.uri: [change]}))


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
async def hover(ls: GradguardServer, params: lsp.HoverParams) -> lsp.Hover | None:
    """On a name: the value it holds (a tensor's provenance); on a code in `# noqa`: its rule's documentation."""
    uri = params.text_document.uri
    document = ls.open_document(uri)
    line = params.position.line
    if document is None or line >= len(document.lines):
        return None
    column = document.position_from_client_units(params.position).character
    text = rule_hover(document.lines[line], column)
    analysed_uri, program_line, cell = uri, line + 1, None
    if text is None and (notebook_uri := notebooks.notebook_of_cell(ls.workspace, uri)) is not None:
        notebook = ls.notebook(notebook_uri)
        cell = notebook.number_of(uri) if notebook is not None else None
        program_line = notebook.model.program_line(cell, line + 1) if cell is not None else None
        if program_line is None or notebook.model.in_broken_cell(program_line):
            return None  # a markdown cell, one left out of the program, or one that does not parse
        analysed_uri = notebook_uri
    if text is None:
        version = ls.version_of(analysed_uri)
        analysed = ls.analysed.get(analysed_uri)
        if analysed is None or analysed.version != version:
            ls.schedule(analysed_uri)
            await asyncio.shield(ls.tasks[analysed_uri])
        opened = ls.opened.get(analysed_uri)
        if opened is None or ls.analysed.get(analysed_uri) is None or \
                ls.analysed[analysed_uri].version != ls.version_of(analysed_uri):
            return None  # still being edited: the next hover answers
        text = await ls.scheduler.answer(  # with the analysis, not beside it
            opened.describe_value, program_line, column, ls.project, value_hover)
        if text is not None and cell is not None and (notebook := ls.notebook(analysed_uri)) is not None:
            text = notebook.model.messages_in_cells(text, cell, relative=True)
    if text is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))


@server.command(debug_info.COMMAND)
def print_debug_information(ls: GradguardServer, *arguments: object) -> str:
    """The server's debug information, as text (the editor shows it: VS Code in the output channel)."""
    return debug_info.debug_information(ls.debug_snapshot())


verify_command.register(server, server)  # the gradguard.verify command and its code lenses


def start(transport: str = "stdio", host: str = "127.0.0.1", port: int = 2087, token: str | None = None) -> None:
    """Serve over stdio (what editors use) or TCP, with `protocol.py`'s reader in place of pygls';
    `token`: what a client must present to run code. Returns when the client closes the stream;
    `exit` raises SystemExit (1 without a shutdown first)."""
    server.token = token
    ops.load()
    gc.freeze()  # the modules just imported (lsprotocol's types above all) and the op table live as long as the server
    try:
        asyncio.run(serve_tcp(server.protocol, host, port) if transport == "tcp" else serve_stdio(server.protocol))
    finally:
        server.shutdown()
