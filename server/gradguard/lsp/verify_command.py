"""`gradguard.verify` in the editor: the command, its code lenses, and the trust it needs.

The command (`workspace/executeCommand`, arguments `[uri]` or `[uri, target]`) runs the saved
file, or its module class or function `target`, under the tracer in a child process, off the
event loop, then publishes the static findings merged with the runtime ones. It runs the user's
code, so it is refused unless the workspace is trusted: VS Code sends `workspace.isTrusted` as
the setting `trusted`; other editors set `"trusted": true` themselves (`lsp/settings.py`).
Over TCP any local process could connect and claim trust, so there the command also needs the
token the server was started with (`TOKEN_VARIABLE` in its environment), presented by the client
as the setting `"token"`; without that variable, the command is refused over TCP. It runs only a
`file:` URI inside the workspace's folders (`..` and symbolic links resolved), or, when no folder is
open, a file the editor has open (`runnable_path`).
The server is reached through `VerifyHost` only.

In a synced notebook the lenses go on its cells (the script's on the first cell that calls
`.backward()`, a module class's on its line in its cell) and the command runs the saved notebook,
its code cells in order as `gradguard verify nb.ipynb` does; its findings go to the cells.
"""

from __future__ import annotations

import ast
import asyncio
import hmac
import re
import threading
import uuid
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import AsyncIterator, Callable, Protocol, TypeVar
from urllib.parse import urlsplit

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from gradguard.config import ConfigError, Settings
from gradguard.engine import project_index
from gradguard.findings import Finding
from gradguard.lsp.settings import EditorVerify
from gradguard.project_python import InterpreterError, find_interpreter
from gradguard.source.files import NOTEBOOK_MAX_BYTES, is_notebook, read_source
from gradguard.source.notebook import Notebook
from gradguard.verify.settings import load_verify_settings
from gradguard.verify.pipeline import FileVerification, static_findings, verify

T = TypeVar("T")

COMMAND = "gradguard.verify"
TOKEN_VARIABLE = "GRADGUARD_LSP_TOKEN"
TITLE = "Verify in-place safety"
_BACKWARD = re.compile(r"\.backward\s*\(")


class VerifyHost(Protocol):
    """What the command needs of the server."""

    def editor_verify(self) -> EditorVerify:
        """The editor's settings for running code."""

    def required_token(self) -> str | None:
        """The token a client must present to run code (None: no token, as over stdio, whose client
        started the server; "": none will do)."""

    def settings_for(self, path: str) -> Settings:
        """The rule settings of the file at `path`."""

    def publish_findings(self, uri: str, version: int | None, text: str, findings: list[Finding]) -> None:
        """Publish `findings` as the diagnostics of `uri` at `version`, whose text was `text`
        (a notebook's: its program, findings in its lines)."""

    def version_of(self, uri: str) -> int | None | bool:
        """The version of the open document or synced notebook at `uri` (False when none is)."""

    def cell_in_notebook(self, cell_uri: str) -> tuple[str, Notebook, int] | None:
        """The synced notebook holding the cell at `cell_uri` (its URI and its cells as one
        program), and the cell's number in it; None for a document that is no notebook's cell."""


def module_classes(text: str) -> list[tuple[int, str]]:
    """(0-based line, name) of each class of `text` that subclasses `nn.Module`, directly or
    through another class of the same file."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    modules: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in classes:
            bases = {ast.unparse(base) for base in node.bases}
            if node.name not in modules and bases & ({"nn.Module", "torch.nn.Module", "Module"} | modules):
                modules.add(node.name)
                changed = True
    return [(node.lineno - 1, node.name) for node in classes if node.name in modules]


@lru_cache(maxsize=4)
def program_classes(text: str) -> tuple[tuple[int, str], ...]:
    """`module_classes` of a notebook's program, parsed once for all its cells' lens requests."""
    return tuple(module_classes(text))


def _lens(line: int, arguments: list[str]) -> lsp.CodeLens:
    position = lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0))
    return lsp.CodeLens(range=position, command=lsp.Command(title=TITLE, command=COMMAND, arguments=arguments))


def code_lenses(uri: str, text: str) -> list[lsp.CodeLens]:
    """One lens above each nn.Module subclass, and one on the first line of a script that calls `.backward()`."""
    lenses = [_lens(line, [uri, name]) for line, name in module_classes(text)]
    if _BACKWARD.search(text):
        lenses.insert(0, _lens(0, [uri]))
    return lenses


def cell_lenses(notebook_uri: str, notebook: Notebook, number: int) -> list[lsp.CodeLens]:
    """The lenses of cell `number` of a notebook: its nn.Module subclasses', and the notebook's
    own (it runs every cell) if this is the first cell that calls `.backward()`."""
    lenses = []
    for line, name in program_classes(notebook.analysable_program):
        found = notebook.cell_at(line + 1)
        if found is not None and found[0].number == number:
            lenses.append(_lens(found[1] - 1, [notebook_uri, name]))
    first = next((cell for cell in notebook.cells if cell.python and _BACKWARD.search(cell.program_text)), None)
    if first is not None and first.number == number:
        lenses.insert(0, _lens(0, [notebook_uri]))
    return lenses


async def run_command(ls: LanguageServer, host: VerifyHost, arguments: tuple) -> dict:
    """Verify the document named by `arguments` and publish the merged findings."""
    editor = host.editor_verify()
    if not editor.trusted:
        raise JsonRpcInvalidRequest("gradguard.verify runs your code, so it needs a trusted workspace "
                                    "(VS Code: trust the folder; other editors: the setting \"trusted\": true)")
    required = host.required_token()
    if required == "":
        raise JsonRpcInvalidRequest(f"gradguard.verify is off over TCP: start the server with {TOKEN_VARIABLE} set "
                                    "and send that token as the setting \"token\"")
    if required is not None and not hmac.compare_digest((editor.token or "").encode(), required.encode()):
        raise JsonRpcInvalidRequest("gradguard.verify over TCP needs the token the server was started with "
                                    f"({TOKEN_VARIABLE}) as the setting \"token\"")
    if not arguments or not isinstance(arguments[0], str) or \
            (len(arguments) > 1 and not isinstance(arguments[1], str)) or len(arguments) > 2:
        raise JsonRpcInvalidParams("gradguard.verify takes [uri] or [uri, target]")
    uri, target = arguments[0], arguments[1] if len(arguments) > 1 else None
    if (cell := host.cell_in_notebook(uri)) is not None:
        uri = cell[0]  # a notebook's cell (VS Code's "Verify Current Module" there): its notebook is run
    path = runnable_path(uri, workspace_folders(ls), host.version_of(uri) is not False)
    try:
        settings = load_verify_settings(path)
        interpreter = find_interpreter(path, editor.interpreter, editor.active_interpreter,
                                       named_by="gradguard.interpreter")
        text = read_source(path, limit=NOTEBOOK_MAX_BYTES if is_notebook(path.name) else None).text  # the saved file
    except (ConfigError, InterpreterError, OSError) as error:
        raise JsonRpcInvalidParams(f"gradguard.verify: {error}") from error
    settings = replace(settings, device=editor.device or settings.device, timeout=editor.timeout or settings.timeout)
    file_settings = host.settings_for(str(path))
    what = f"{target} in {path.name}" if target else path.name

    async with progress(ls, f"gradguard: verifying {what}") as report:
        def static_then_run() -> FileVerification:  # off the event loop: minutes of user code
            report("analysing it", 10)
            static = static_findings(path, file_settings, project_index(use_jedi=False))
            report(f"running it with {interpreter.executable} on {settings.device} "
                   f"(at most {settings.timeout:g} s)", 30)
            return verify([(str(path), static, file_settings)], target, settings, interpreter)[0]

        result = await off_the_loop(static_then_run)
    notebook = Notebook.parse(text) if is_notebook(path.name) else None
    version = host.version_of(uri)
    host.publish_findings(uri, None if version is False else version, text if notebook is None else notebook.program,
                          [v.finding for v in result.findings])
    return {"device": result.device, "problem": result.problem, "interpreter": interpreter.describe(),
            "findings": [described(v.finding, v.origin, notebook) for v in result.findings]}


def workspace_folders(ls: LanguageServer) -> list[Path]:
    """The workspace's folders (and its root), symbolic links resolved."""
    uris = [folder.uri for folder in ls.workspace.folders.values()] + [ls.workspace.root_uri or ""]
    return [Path(path).resolve() for uri in uris if (path := to_fs_path(uri)) is not None]


def runnable_path(uri: str, folders: list[Path], is_open: bool) -> Path:
    """The file `uri` names, if verify may run it: a `file:` URI inside one of the workspace's
    `folders` (`..` and symbolic links resolved), or, when none is open (an editor on a single
    file), a document the editor has open. Raises `JsonRpcInvalidRequest`, saying why, otherwise."""
    if urlsplit(uri).scheme != "file" or (path := to_fs_path(uri)) is None:
        raise JsonRpcInvalidRequest(f"gradguard.verify runs only files on disk (file: URIs), not {uri}: save it "
                                    "in the workspace first")
    if folders and not any(Path(path).resolve().is_relative_to(folder) for folder in folders):
        raise JsonRpcInvalidRequest(f"gradguard.verify runs only files inside the workspace's folders, and "
                                    f"{Path(path).resolve()} is outside them")
    if not folders and not is_open:
        raise JsonRpcInvalidRequest(f"gradguard.verify runs only the files open in the editor when no workspace "
                                    f"folder is open, and {path} is not open")
    return Path(path)


def described(finding: Finding, origin: str, notebook: Notebook | None) -> dict:
    """The command's answer for one finding: in a notebook, its cell (numbered as in the file) and the line in it."""
    if notebook is None:
        return {"code": finding.code, "line": finding.span.start.line, "origin": origin, "message": finding.message}
    local = notebook.localised(finding)
    return {"code": local.code, "cell": local.span.cell, "line": local.span.start.line, "origin": origin,
            "message": local.message}


@asynccontextmanager
async def progress(ls: LanguageServer, title: str) -> AsyncIterator[Callable[[str, int], None]]:
    """`$/progress` (window/workDoneProgress) from begin to end around the body, when the client
    supports it; yields `report(message, percentage)`, callable from any thread."""
    loop = asyncio.get_running_loop()
    token = f"gradguard-verify-{uuid.uuid4()}"
    shown = ls.client_capabilities.window is not None and bool(ls.client_capabilities.window.work_done_progress)
    if shown:
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title, percentage=0))
        except Exception:  # a client that refuses the token still gets the command's answer
            shown = False

    def report(message: str, percentage: int) -> None:
        if shown:
            loop.call_soon_threadsafe(ls.work_done_progress.report, token,
                                      lsp.WorkDoneProgressReport(message=message, percentage=percentage))

    try:
        yield report
    finally:
        if shown:
            ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd())
            ls.work_done_progress.tokens.pop(token, None)


async def off_the_loop(work: Callable[[], T]) -> T:
    """`work()` in a daemon thread of its own: the default executor would hold the server's exit
    (asyncio waits for its threads) until the run ends; here the exit stops the run instead."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if not future.done():
            future.set_exception(error) if error is not None else future.set_result(result)

    def run() -> None:
        try:
            result, error = work(), None
        except BaseException as raised:  # handed to the awaiting coroutine
            result, error = None, raised
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:
            pass  # the loop is closed: the server is gone, nobody waits

    threading.Thread(target=run, name="gradguard-verify", daemon=True).start()
    return await future


def register(server: LanguageServer, host: VerifyHost) -> None:
    """Add the `gradguard.verify` command and its code lenses to `server`."""

    @server.command(COMMAND)
    async def verify_command(ls: LanguageServer, *arguments: object) -> dict:
        return await run_command(ls, host, arguments)

    @server.feature(lsp.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: LanguageServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        if ls.workspace.get_notebook_document(cell_uri=params.text_document.uri) is not None:
            cell = host.cell_in_notebook(params.text_document.uri)
            return cell_lenses(*cell) if cell is not None else []
        document = ls.workspace.get_text_document(params.text_document.uri)
        return code_lenses(params.text_document.uri, document.source)
