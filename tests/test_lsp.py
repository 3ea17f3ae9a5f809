"""`gradguard lsp` end to end, driven by pytest-lsp as a VS Code-like client and as Neovim.

Each marked case of the shared corpus is opened: the server must publish exactly the expected
codes at the expected lines; the preferred quick fix is applied and the fixed program must then
run cleanly with torch.
"""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from gradguard.config import Settings
from gradguard.engine import analyse_document
from gradguard.fixes.edits import apply_edits
from gradguard.source.document import Document

from helpers import CORPUS, MARK, markers, over_corpus

CASES = CORPUS / "cases"
MARKED = sorted(p.name for p in CASES.glob("*.py") if MARK.search(p.read_text()))
FIXABLE = ["seed_resnet_relu_then_add.py", "tanh_mul_.py", "seed_leaf_normal.py", "chunk_view_imul.py",
           "sequential_sigmoid_relu_inplace.py"]


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "gradguard", "lsp"]),
)
async def client(request, lsp_client: LanguageClient):
    capabilities = client_capabilities(request.param)
    result = await lsp_client.initialize_session(lsp.InitializeParams(capabilities=capabilities))
    lsp_client.pulls = capabilities.text_document.diagnostic is not None
    lsp_client.negotiated_encoding = result.capabilities.position_encoding or lsp.PositionEncodingKind.Utf16
    yield
    await lsp_client.shutdown_session()


async def open_and_wait(client: LanguageClient, path: Path, text: str | None = None) -> list[lsp.Diagnostic]:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=text if text is not None else path.read_text())))
    if client.pulls:  # VS Code pulls diagnostics; Neovim receives them
        report = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri)))
        return report.items
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


def expected(path: Path) -> set[tuple[int, str]]:
    """The markers' (line, code), lines counted from 0 as LSP counts them."""
    return {(n - 1, code) for n, code in markers(path)}


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize("name", over_corpus(sorted(p.name for p in CASES.glob("*.py"))))
async def test_each_corpus_case_gets_exactly_its_markers(client: LanguageClient, name: str):
    diagnostics = await open_and_wait(client, CASES / name)
    got = {(d.range.start.line, d.code) for d in diagnostics if d.severity in (1, 2)}
    assert got == expected(CASES / name)
    assert all(d.source == "gradguard" for d in diagnostics)


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize("name", over_corpus(MARKED))
async def test_each_quick_fix_is_one_of_the_fixes_proven_by_running_them(client: LanguageClient, name: str,
                                                                        tmp_path):
    """Every quick fix offered on a marked corpus case is, edit for edit, one of the engine's fixes:
    tests/test_fixes.py runs each of those with torch (the fixed program must run cleanly)."""
    path = tmp_path / name
    text = (CASES / name).read_text()
    path.write_text(text)
    offered = []
    for diagnostic in await open_and_wait(client, path):
        actions = await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(path.as_uri()), range=diagnostic.range,
            context=lsp.CodeActionContext(diagnostics=[diagnostic], only=[lsp.CodeActionKind.QuickFix])))
        offered += [fixed for a in actions if isinstance(a, lsp.CodeAction)
                    and "# noqa" not in (fixed := apply(text, a.edit, path.as_uri()))]
    proven = [apply_edits(text, list(fix.edits))
              for finding in analyse_document(Document.parse(str(path), text), Settings()) for fix in finding.fixes]
    assert sorted(offered) == sorted(proven)


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize("name", FIXABLE)
async def test_preferred_quick_fix_makes_the_program_run(client: LanguageClient, name: str, tmp_path):
    path = tmp_path / name
    path.write_text((CASES / name).read_text())
    diagnostics = await open_and_wait(client, path)
    target = next(d for d in diagnostics if d.code in {c for _, c in expected(path)})
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(path.as_uri()), range=target.range,
        context=lsp.CodeActionContext(diagnostics=[target], only=[lsp.CodeActionKind.QuickFix])))
    preferred = [a for a in actions if isinstance(a, lsp.CodeAction) and a.is_preferred]
    assert preferred, [a.title for a in actions]
    fixed = apply(path.read_text(), preferred[0].edit, path.as_uri())
    path.write_text(fixed)
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-800:]


@pytest.mark.asyncio(loop_scope="function")
async def test_a_compiled_regions_save_changed_outside_it_is_gg005_with_its_fix(client: LanguageClient, tmp_path):
    """A labelled program (inductor silently computes the gradient from the changed prototypes):
    GG005 at its marker, and the preferred quick fix clones the argument at the compiled call."""
    program = Path(__file__).parent / "programs" / "compiled_prototype_scores_ema_update_mul_.py"
    path = tmp_path / program.name
    path.write_text(program.read_text())
    diagnostics = await open_and_wait(client, path)
    assert {(d.range.start.line, d.code) for d in diagnostics} == expected(path) == {(24, "GG005")}
    (target,) = diagnostics
    assert "compiled by inductor, it raises nothing and computes the gradients from the changed value" in target.message
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(path.as_uri()), range=target.range,
        context=lsp.CodeActionContext(diagnostics=[target], only=[lsp.CodeActionKind.QuickFix])))
    preferred = [a for a in actions if isinstance(a, lsp.CodeAction) and a.is_preferred]
    fixed = apply(path.read_text(), preferred[0].edit, path.as_uri()).splitlines()
    assert fixed[23] == "logits = prototype_logits(embeddings, prototypes.clone())"


@pytest.mark.asyncio(loop_scope="function")
async def test_columns_follow_the_negotiated_encoding(client: LanguageClient, tmp_path):
    text = ("import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\n"
            "s = '日本😀'; y.mul_(2)\ny.sum().backward()\n")
    diagnostics = await open_and_wait(client, tmp_path / "cjk.py", text)
    (diagnostic,) = diagnostics
    prefix = "s = '日本😀'; "
    encoding = client.negotiated_encoding
    units = {lsp.PositionEncodingKind.Utf16: len(prefix.encode("utf-16-le")) // 2,
             lsp.PositionEncodingKind.Utf8: len(prefix.encode("utf-8")),
             lsp.PositionEncodingKind.Utf32: len(prefix)}[encoding]
    assert diagnostic.range.start == lsp.Position(3, units)


@pytest.mark.asyncio(loop_scope="function")
async def test_a_half_typed_file_gets_one_syntax_diagnostic(client: LanguageClient, tmp_path):
    diagnostics = await open_and_wait(client, tmp_path / "typing.py", "import torch\ndef forward(self, x)\n")
    assert [(d.code, d.range.start.line) for d in diagnostics] == [("GG000", 1)]


def apply(text: str, edit: lsp.WorkspaceEdit, uri: str) -> str:
    """Apply a WorkspaceEdit's text edits (changes or documentChanges) to `text`."""
    edits = list((edit.changes or {}).get(uri, []))
    for change in edit.document_changes or []:
        edits.extend(change.edits)
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: lsp.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        line = lines[position.line]
        units, index = 0, 0
        while index < len(line) and units < position.character:
            units += len(line[index].encode("utf-16-le")) // 2
            index += 1
        return starts[position.line] + index

    for item in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(item.range.start)] + item.new_text + text[offset(item.range.end):]
    return text


def test_a_request_with_invalid_params_gets_an_error_response():
    """Raw JSON-RPC, as a buggy client would send it: the server must answer with an error."""
    server = subprocess.Popen([sys.executable, "-m", "gradguard", "lsp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(message: dict) -> None:
        body = json.dumps(message).encode()
        server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        server.stdin.flush()

    def receive() -> dict:
        length = 0
        while (line := server.stdout.readline().strip()):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(server.stdout.read(length))

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        assert receive()["id"] == 1
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
              "params": {"textDocument": {"uri": 3}, "position": "nowhere"}})
        while (reply := receive()).get("id") != 2:
            pass
        assert reply["error"]["code"] in (-32602, -32603), reply
    finally:
        server.kill()
        server.wait()


@pytest.mark.asyncio(loop_scope="function")
async def test_unknown_documents_and_out_of_range_positions_are_answered(client: LanguageClient):
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier("file:///nowhere/never.py"), position=lsp.Position(10_000, 5)))
    assert hover is None


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.usefixtures("corpus")
async def test_quick_fixes_come_without_the_diagnostic_being_sent_back(client: LanguageClient, tmp_path):
    """ALE sends no diagnostics (or stripped ones) in the request: the requested range is enough."""
    path = tmp_path / "tanh_mul_.py"
    path.write_text((CASES / "tanh_mul_.py").read_text())
    (diagnostic,) = await open_and_wait(client, path)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(path.as_uri()), range=diagnostic.range,
        context=lsp.CodeActionContext(diagnostics=[])))
    titles = [a.title for a in actions]
    assert "gradguard: Rewrite out of place: `y = y.mul(2)`" in titles
    assert "gradguard: disable GG001 for this line" in titles


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.usefixtures("corpus")
async def test_the_files_pyproject_settings_apply(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gradguard]\nignore = ["GG001"]\n')
    path = tmp_path / "tanh_mul_.py"
    path.write_text((CASES / "tanh_mul_.py").read_text())
    assert list(await open_and_wait(client, path)) == []


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.usefixtures("corpus")
async def test_settings_pulled_with_workspace_configuration_apply(client: LanguageClient, tmp_path):
    """A client that sent no initializationOptions is asked for the "gradguard" section when it
    says its configuration changed (Neovim's `settings`, Eglot's workspace configuration)."""
    path = tmp_path / "tanh_mul_.py"
    path.write_text((CASES / "tanh_mul_.py").read_text())
    assert [d.code for d in await open_and_wait(client, path)] == ["GG001"]
    client.set_configuration({"ignore": ["GG001"]}, section="gradguard")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    for _ in range(100):
        if client.pulls:
            report = await client.text_document_diagnostic_async(
                lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(path.as_uri())))
            found = report.items
        else:
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            found = client.diagnostics[path.as_uri()]
        if not found:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("GG001 is still reported after the configuration said to ignore it")


@pytest.mark.asyncio(loop_scope="function")
async def test_hover_shows_the_rule_under_the_cursor(client: LanguageClient, tmp_path):
    text = "import torch\nz = 1  # noqa: GG002, GG004\n"
    path = tmp_path / "h.py"
    await open_and_wait(client, path, text)
    for column, code in ((16, "GG002"), (24, "GG004")):
        hover = await client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(path.as_uri()), position=lsp.Position(1, column)))
        assert hover is not None and hover.contents.value.startswith(f"**{code} ")


@pytest.mark.asyncio(loop_scope="function")
async def test_hover_on_a_name_tells_the_value_it_holds(client: LanguageClient, tmp_path):
    """The hover shows what `gradguard explain` prints for a name (`explain.describe_value`)."""
    text = ("import torch\n"
            "w = torch.randn(3, requires_grad=True)  # 日本 🚀\n"
            "y = torch.sigmoid(w)\n"
            "y.mul_(2)\n"
            "lr = 0.5\n"
            "v = y.view(-1)\n"
            "y.sum().backward()\n"
            "v.zero_()  # sigmoid's save met the change of line 4 already\n")
    path = tmp_path / "p.py"
    await open_and_wait(client, path, text)

    async def hover(line: int, character: int) -> str | None:
        found = await client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(path.as_uri()), position=lsp.Position(line, character)))
        return None if found is None else found.contents.value

    assert await hover(3, 0) == (
        "**`y`**: the output of `torch.sigmoid` (line 3)\n\n"
        "- requires grad; not a leaf; graph known: 1 save\n"
        "- shares its version counter with `v`: an in-place change of one is a change of all\n"
        "- saved for backward: its output by `torch.sigmoid` (line 3); an in-place change before that backward raises\n"
        "- changed in place here: reported by GG001")
    assert await hover(7, 0) == (
        "**`v`**: the view `y.view` (line 6)\n\n"
        "- requires grad; not a leaf; graph known: 1 save\n"
        "- shares its version counter with `y`: an in-place change of one is a change of all\n"
        "- nothing has saved it for backward here: changing it in place here leaves backward intact\n"
        "- changed in place here, not reported: GG001: no save of the tensor it changes (nor of one sharing its "
        "version counter) is live here: none was made, or an earlier change met it and is reported there; "
        "GG002: the tensor is not a leaf (an op computed it) nor a view of one; "
        "GG003: the tensor is no view torch restricts: an output of `chunk`/`split`/`unbind`, a view made under "
        "`no_grad`, one a custom Function or a backward-hooked module returned; "
        "GG004: it does not write through `.data` or an `unsafe_*` view; "
        "GG005: it changes no save that a region compiled by inductor reads unchecked (a matrix product's operand, "
        "neither operand written transposed), from outside that region")
    assert await hover(2, 18) == (
        "**`w`**: made by `torch.randn` (line 2)\n\n"
        "- requires grad; a leaf; graph known: empty\n"
        "- a leaf that requires grad: changing it in place outside `torch.no_grad()` raises")
    assert await hover(4, 0) == (
        "**`lr`**: a Python number: 0.5\n\n"
        "- not a tensor: autograd never sees it, and an in-place operator on it rebinds the name")
    assert await hover(2, 4) is None  # `torch`: a module of code, not a value


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.usefixtures("corpus")
async def test_fix_all_applies_every_safe_fix(client: LanguageClient, tmp_path):
    path = tmp_path / "tanh_mul_.py"
    path.write_text((CASES / "tanh_mul_.py").read_text())
    await open_and_wait(client, path)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(path.as_uri()), range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
        context=lsp.CodeActionContext(diagnostics=[], only=["source.fixAll.gradguard"])))
    assert [a.kind for a in actions] == ["source.fixAll.gradguard"]
    fixed = apply(path.read_text(), actions[0].edit, path.as_uri())
    assert "y = y.mul(2)" in fixed and fixed.count("\n") == path.read_text().count("\n")
    path.write_text(fixed)
    assert subprocess.run([sys.executable, str(path)], capture_output=True, timeout=120).returncode == 0


def long_program(helpers: int) -> str:
    """A clean program whose analysis takes a while (`helpers` functions before it): a request made
    right after a change of it comes before that change's analysis ends."""
    defined = "".join(f"def step_{n}(t):\n    u = t.exp()\n    return u * {n}\n\n\n" for n in range(helpers))
    return f"import torch\n\n\n{defined}x = torch.randn(3, requires_grad=True)\ny = x.sigmoid()\ny.sum().backward()\n"


@pytest.mark.asyncio(loop_scope="function")
async def test_fix_all_asked_right_after_a_change_fixes_the_text_as_it_is_now(client: LanguageClient, tmp_path):
    """A save right after the last keystroke asks for fix-all before that change is analysed: the
    answer waits for the analysis and fixes the new text, instead of saving it unfixed."""
    path = tmp_path / "train.py"
    clean = long_program(300)
    path.write_text(clean)
    assert list(await open_and_wait(client, path)) == []
    broken = clean.replace("y.sum()", "y.mul_(2)\ny.sum()")
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=broken)]))
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(path.as_uri()), range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
        context=lsp.CodeActionContext(diagnostics=[], only=["source.fixAll"])))
    assert [a.kind for a in actions] == ["source.fixAll.gradguard"]
    fixed = apply(broken, actions[0].edit, path.as_uri())
    assert fixed == broken.replace("y.mul_(2)", "y = y.mul(2)")
    path.write_text(fixed)
    assert subprocess.run([sys.executable, str(path)], capture_output=True, timeout=120).returncode == 0


@pytest.mark.asyncio(loop_scope="function")
async def test_ctrl_dot_right_after_typing_offers_the_fix_of_the_text_as_it_is_now(client: LanguageClient, tmp_path):
    """Ctrl+. (a code action request the user invoked) made before the last keystroke is analysed
    waits for that analysis and offers its quick fix, which makes the program run."""
    path = tmp_path / "train.py"
    clean = long_program(1500)
    path.write_text(clean)
    assert list(await open_and_wait(client, path)) == []
    broken = clean.replace("y.sum()", "y.mul_(2)\ny.sum()")
    line = broken.splitlines().index("y.mul_(2)")
    where = lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0))
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=broken)]))
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(path.as_uri()), range=where,
        context=lsp.CodeActionContext(diagnostics=[], trigger_kind=lsp.CodeActionTriggerKind.Invoked)))
    fix = next(a for a in actions if a.title == "gradguard: Rewrite out of place: `y = y.mul(2)`")
    fixed = apply(broken, fix.edit, path.as_uri())
    assert fixed == broken.replace("y.mul_(2)", "y = y.mul(2)")
    path.write_text(fixed)
    assert subprocess.run([sys.executable, str(path)], capture_output=True, timeout=120).returncode == 0


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.usefixtures("corpus")
async def test_pulling_clients_get_result_ids_and_no_pushes(client: LanguageClient, tmp_path):
    if not client.pulls:
        pytest.skip("this client receives pushed diagnostics")
    path = tmp_path / "tanh_mul_.py"
    path.write_text((CASES / "tanh_mul_.py").read_text())
    items = await open_and_wait(client, path)
    assert [(d.code, d.range.start.line) for d in items] == [("GG001", 5)]
    first = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(path.as_uri())))
    again = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(path.as_uri()), previous_result_id=first.result_id))
    assert again.kind == "unchanged" and again.result_id == first.result_id
    assert path.as_uri() not in client.diagnostics, "a pulling client gets no publishDiagnostics"
