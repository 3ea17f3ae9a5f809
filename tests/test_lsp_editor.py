"""What an editor extension asks of `gradguard lsp` beyond diagnostics: settings that arrive while
a document is analysed, config files changed outside the editor, the source actions a client asks
for without `only`, `$/progress` of `gradguard.verify`, and the debug information command."""

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

import gradguard

BROKEN = "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.sigmoid()\ny.mul_(2)\ny.sum().backward()\n"
# a long first analysis, ending in GG001 on its last lines: settings can arrive while it runs
HELPERS = "".join(f"def step_{n}(t):\n    u = t.exp()\n    return u * {n}\n\n\n" for n in range(300))
SLOW = f"import torch\n\n\n{HELPERS}{BROKEN.removeprefix('import torch')}"
START = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "gradguard", "lsp"]),
)
async def client(request, lsp_client: LanguageClient):
    capabilities = client_capabilities(request.param)
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=capabilities))
    lsp_client.pulls = capabilities.text_document.diagnostic is not None
    yield
    await lsp_client.shutdown_session()


def open_document(client: LanguageClient, path: Path, text: str) -> None:
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=path.as_uri(), language_id="python", version=1, text=text)))


async def codes_shown(client: LanguageClient, path: Path) -> list[str]:
    """The codes the editor shows for `path` now: pulled, or the latest pushed."""
    if client.pulls:
        report = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(path.as_uri())))
        return [d.code for d in report.items]
    if path.as_uri() not in client.diagnostics:
        await asyncio.wait_for(client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
    return [d.code for d in client.diagnostics.get(path.as_uri(), [])]


async def eventually_shown(client: LanguageClient, path: Path, codes: list[str], seconds: float = 10) -> None:
    shown: list[str] = []
    for _ in range(int(seconds * 10)):
        if (shown := await codes_shown(client, path)) == codes:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the editor shows {shown}, not {codes}")


@pytest.mark.asyncio(loop_scope="function")
async def test_settings_pushed_while_the_first_analysis_runs_apply_to_it(client: LanguageClient, tmp_path):
    """The editor pushes its settings right after start-up, while the first document's first
    analysis runs: its diagnostics follow those settings, not the ones that analysis started with."""
    path = tmp_path / "train.py"
    path.write_text(SLOW)
    open_document(client, path, SLOW)
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"gradguard": {"ignore": ["GG001"]}}))
    await eventually_shown(client, path, [])


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "gradguard", "lsp"]))
async def uninitialised(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_settings_pushed_while_the_server_pulls_its_own_are_kept(uninitialised: LanguageClient, tmp_path):
    """A client without initializationOptions is asked for its settings once initialized; a push
    that arrives before its answer is the newer word, and the answer does not undo it."""
    client = uninitialised
    client.set_configuration({"ignore": []}, section="gradguard")
    capabilities = client_capabilities("neovim")
    await client.initialize_session(lsp.InitializeParams(capabilities=capabilities))
    client.pulls = capabilities.text_document.diagnostic is not None
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"gradguard": {"ignore": ["GG001"]}}))
    path = tmp_path / "train.py"
    path.write_text(BROKEN)
    open_document(client, path, BROKEN)
    await eventually_shown(client, path, [])
    await asyncio.sleep(1)  # what a late answer would publish
    assert await codes_shown(client, path) == []


def apply_whole(text: str, edit: lsp.WorkspaceEdit, uri: str) -> str:
    """`text` after fix-all's edit (one edit replacing the whole text)."""
    (change,) = (edit.changes or {}).get(uri, []) or [e for c in edit.document_changes or [] for e in c.edits]
    assert change.range.start == lsp.Position(0, 0)
    return change.new_text


@pytest.mark.asyncio(loop_scope="function")
async def test_a_request_without_only_offers_fix_all(client: LanguageClient, tmp_path):
    """VS Code's light bulb and the editors' "code actions" menus send no `only`: fix-all is among
    the actions (with its edit, or resolved when applied), as Ruff's server offers it."""
    path = tmp_path / "train.py"
    path.write_text(BROKEN)
    open_document(client, path, BROKEN)
    await eventually_shown(client, path, ["GG001"])
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(path.as_uri()), range=START, context=lsp.CodeActionContext([])))
    (fix_all,) = [a for a in actions if a.kind == "source.fixAll.gradguard"]
    if fix_all.edit is None:
        fix_all = await client.code_action_resolve_async(fix_all)
    assert apply_whole(BROKEN, fix_all.edit, path.as_uri()) == BROKEN.replace("y.mul_(2)", "y = y.mul(2)")


@pytest.mark.asyncio(loop_scope="function")
async def test_no_fix_all_is_offered_when_nothing_is_safely_fixable(client: LanguageClient, tmp_path):
    text = BROKEN.replace("y.mul_(2)\n", "")
    path = tmp_path / "clean.py"
    open_document(client, path, text)
    await eventually_shown(client, path, [])
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(path.as_uri()), range=START, context=lsp.CodeActionContext([])))
    assert list(actions) == []


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "gradguard", "lsp"]))
async def trusted_client(lsp_client: LanguageClient):
    """VS Code in a trusted workspace, whose Python is this one (it has torch)."""
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"trusted": True, "interpreter": sys.executable, "verify": {"device": "cpu"}}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_verify_shows_its_progress_from_begin_to_end(trusted_client: LanguageClient, tmp_path):
    """`gradguard.verify` runs for seconds: the editor shows what it does meanwhile (`$/progress`)."""
    path = tmp_path / "train.py"
    path.write_text(BROKEN)
    open_document(trusted_client, path, BROKEN)
    result = await trusted_client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="gradguard.verify", arguments=[path.as_uri()]))
    assert [(f["code"], f["origin"]) for f in result["findings"]] == [("GG001", "both")]
    (reports,) = [reports for token, reports in trusted_client.progress_reports.items()
                  if str(token).startswith("gradguard-verify")]
    assert [r.kind for r in reports] == ["begin", "report", "report", "end"]
    assert reports[0].title == "gradguard: verifying train.py"
    assert [r.message.split(" with ")[0] for r in reports[1:3]] == ["analysing it", "running it"]


@pytest.mark.asyncio(loop_scope="function")
async def test_a_pyproject_changed_outside_the_editor_applies_at_once(uninitialised: LanguageClient, tmp_path):
    """The server asks the editor to watch pyproject.toml (dynamic registration); when the editor
    reports a change made outside it, the open documents' diagnostics follow the new settings."""
    client = uninitialised
    capabilities = client_capabilities("visual-studio-code")
    await client.initialize_session(lsp.InitializeParams(capabilities=capabilities))
    client.pulls = capabilities.text_document.diagnostic is not None
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "train"\n')
    path = tmp_path / "train.py"
    path.write_text(BROKEN)
    open_document(client, path, BROKEN)
    await eventually_shown(client, path, ["GG001"])
    for _ in range(100):  # the server asks for its watchers once initialized: on a loaded machine, after the diagnostics
        if getattr(client, "registrations", None):
            break
        await asyncio.sleep(0.1)
    watched = [watcher["globPattern"] for registration in getattr(client, "registrations", [])
               if registration.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
               for watcher in registration.register_options["watchers"]]
    assert "**/pyproject.toml" in watched

    pyproject.write_text('[project]\nname = "train"\n\n[tool.gradguard]\nignore = ["GG001"]\n')
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        [lsp.FileEvent(uri=pyproject.as_uri(), type=lsp.FileChangeType.Changed)]))
    await eventually_shown(client, path, [])


@pytest.mark.asyncio(loop_scope="function")
async def test_the_debug_information_says_what_the_server_runs_with(uninitialised: LanguageClient, tmp_path):
    """`gradguard.printDebugInformation` (Ruff's `ruff.printDebugInformation`): the interpreter, the
    versions, each workspace folder's resolved settings and the open documents, for a bug report."""
    client = uninitialised
    (tmp_path / "pyproject.toml").write_text('[tool.gradguard]\nselect = ["GG001"]\n')
    await client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        client_info=lsp.ClientInfo("Visual Studio Code", "1.99"),
        workspace_folders=[lsp.WorkspaceFolder(uri=tmp_path.as_uri(), name="train")]))
    path = tmp_path / "train.py"
    open_document(client, path, BROKEN)
    text = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="gradguard.printDebugInformation"))
    lines = text.splitlines()
    assert lines[0].startswith("gradguard ")
    assert lines[0].endswith(f" language server, from {Path(gradguard.__file__).parent}")
    assert f"Server's Python: {sys.executable} " in text
    versions = next(line for line in lines if line.startswith("Versions: "))
    assert "pygls 2." in versions and "libcst 1." in versions and "lsprotocol " in versions
    assert "torch 2." in versions  # this venv's: the server's environment has torch here
    assert any(line.startswith("Client: Visual Studio Code 1.99; position encoding utf-16;") for line in lines)
    folder = lines.index(f"Workspace folder {tmp_path}:")
    assert "    select = ('GG001',)" in lines[folder + 1:]
    assert f"    {path.as_uri()} (version 1)" in lines[lines.index("Open documents (1):") + 1:]
