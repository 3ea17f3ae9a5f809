"""`gradguard verify`: the user's code run under the tracer, in a child process.

The corpus cases run in one `gradguard verify` invocation (torch is imported once per child);
each marked line must be reported at run time with its code, nothing else may be, and a GG001
must name the line that saved the tensor. The other tests run small programs and check what a
user sees: codes, lines, messages, exit statuses, and that the user's output stays off stdout.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from helpers import CORPUS, markers, over_corpus
from lsp_wire import framed, read_message

CASES = sorted((CORPUS / "cases").glob("*.py"))
GRADGUARD = [sys.executable, "-m", "gradguard"]
DEVICE = os.environ.get("GRADGUARD_VERIFY_DEVICE", "auto")  # the corpus runs here; `cuda` on a GPU machine


def verify(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`gradguard verify ARGS`, on the CPU unless ARGS name a device."""
    device = [] if "--device" in args else ["--device", "cpu"]
    return subprocess.run([*GRADGUARD, "verify", *device, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


@pytest.fixture(scope="module")
def corpus_run(corpus: Path) -> dict[str, list[dict]]:
    """Every corpus case verified by one `gradguard verify --format json` (the findings per case)."""
    run = verify("--format", "json", "--device", DEVICE, *map(str, CASES))
    assert run.returncode == 1, run.stderr[-2000:]
    by_file: dict[str, list[dict]] = {}
    for item in json.loads(run.stdout):
        by_file.setdefault(Path(item["filename"]).name, []).append(item)
    return by_file


@pytest.mark.parametrize("case", over_corpus(CASES), ids=lambda p: p.name)
def test_the_run_reports_exactly_the_corpus_markers(corpus_run, case: Path):
    found = corpus_run.get(case.name, [])
    runtime = {(f["location"]["row"], f["code"]) for f in found if f["origin"] in ("runtime", "both")}
    assert runtime == markers(case)
    assert all(f["device"] in ("cpu", "cuda") for f in found if f["origin"] != "static")


@pytest.mark.parametrize("case", over_corpus([c for c in CASES if any(code == "GG001" for _, code in markers(c))]),
                         ids=lambda p: p.name)
def test_a_gg001_found_at_run_time_names_the_saving_line(corpus_run, case: Path):
    """The saving line is the one the static analysis names: both must agree with what torch saved."""
    for finding in (f for f in corpus_run[case.name] if f["code"] == "GG001"):
        assert finding["origin"] == "both"
        saved = [r for r in finding["related"] if "saved" in r["message"] and "for backward here" in r["message"]]
        assert len({r["location"]["row"] for r in saved}) == 1, finding["related"]


def test_optimizer_step_between_forward_and_backward_is_found_at_the_step_line(tmp_path):
    script = write(tmp_path, "train.py", """
        import torch
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = model(torch.randn(16, 4)).pow(2).mean()
            opt.step()
            opt.zero_grad()
            loss.backward()
        """)
    run = verify("--format", "json", str(script))
    assert run.returncode == 1, run.stderr
    [finding] = json.loads(run.stdout)
    assert (finding["code"], finding["location"]["row"], finding["origin"]) == ("GG001", 8, "both")
    assert finding["device"] == "cpu"
    assert [r["location"]["row"] for r in finding["related"]][:1] == [4]  # the Linear, built by nn.Sequential


def test_a_runtime_finding_the_static_analysis_missed_is_added(tmp_path):
    script = write(tmp_path, "dynamic.py", """
        import torch

        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        getattr(y, "mul_")(2)
        y.sum().backward()
        """)
    run = verify(str(script))
    assert run.returncode == 1
    assert run.stdout == (  # the full text format: the saving line (4:5) underlined in the snippet
        f'{script}:5:1: GG001 [error] `getattr(y, "mul_")(2)` changes in place a float32[4] tensor that '
        "`torch.sigmoid(x)` saved for backward (its output) at line 4: backward through it will raise \"one of the variables needed for gradient computation has been modified by an inplace operation\". "
        "Found running on cpu.\n"
        "  |\n"
        "4 | y = torch.sigmoid(x)\n"
        "  |     ---------------- `torch.sigmoid(x)` saved the tensor for backward here (its output)\n"
        '5 | getattr(y, "mul_")(2)\n'
        "  | ^^^^^^^^^^^^^^^^^^^^^ GG001\n"
        "  |\n")
    assert "Found 1 problem (0 confirmed at run time, 1 found only at run time)." in run.stderr
    [finding] = json.loads(verify("--format", "json", str(script)).stdout)
    assert (finding["aten_op"], finding["origin"]) == ("sigmoid", "runtime")  # the ATen op in JSON only


def test_runtime_only_findings_carry_the_static_rules_fixes_and_those_fixes_work(tmp_path):
    """Lines the static analysis cannot follow (`eval`): the run finds them, with the fixes the
    static rule offers for such a line (unsafe: the run cannot tell whether a name shares the tensor)."""
    script = write(tmp_path, "dynamic.py", """
        import torch
        import torch.nn as nn

        x = torch.randn(4, requires_grad=True)
        y = eval("torch.sigmoid")(x)
        y.mul_(2)
        z = eval("torch.exp")(x)
        z += 1
        act = nn.Sequential(eval("nn.Sigmoid")(), nn.ReLU(inplace=eval("True")))
        (y.sum() + z.sum() + act(x).sum()).backward()
        """)
    run = verify("--format", "json", str(script))
    assert run.returncode == 1, run.stderr
    found = [(f["code"], f["location"]["row"], f["origin"], f["fix"]["message"], f["fix"]["applicability"],
              [(e["location"]["row"], e["location"]["column"], e["end_location"]["column"], e["content"])
               for e in f["fix"]["edits"]]) for f in json.loads(run.stdout)]
    assert found == [
        ("GG001", 6, "runtime", "Rewrite out of place: `y = y.mul(2)`", "unsafe", [(6, 1, 10, "y = y.mul(2)")]),
        ("GG001", 8, "runtime", "Rewrite out of place: `z = z + 1`", "unsafe", [(8, 1, 7, "z = z + 1")]),
        ("GG001", 9, "runtime", "Remove `inplace=True`", "unsafe", [(9, 43, 72, "nn.ReLU()")]),
    ]
    lines = script.read_text().splitlines(keepends=True)
    for _, row, _, _, _, [(_, start, end, content)] in found:
        lines[row - 1] = lines[row - 1][:start - 1] + content + lines[row - 1][end - 1:]
    script.write_text("".join(lines))
    assert subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120).returncode == 0
    assert verify(str(script)).returncode == 0


def test_a_runtime_only_leaf_change_gets_the_no_grad_fix(tmp_path):
    script = write(tmp_path, "leaf.py", """
        import torch as T

        w = eval("T.nn.Parameter")(T.ones(3))
        w.add_(1)
        """)
    run = verify("--format", "json", str(script))
    [finding] = json.loads(run.stdout)
    assert (finding["code"], finding["location"]["row"], finding["origin"]) == ("GG002", 4, "runtime")
    assert (finding["fix"]["message"], finding["fix"]["applicability"]) == ("Wrap in `with torch.no_grad():`", "safe")
    [edit] = finding["fix"]["edits"]
    assert edit["content"] == "with T.no_grad():\n    w.add_(1)"
    script.write_text(script.read_text().replace("w.add_(1)", edit["content"]))
    assert subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120).returncode == 0
    assert verify(str(script)).returncode == 0


def test_a_static_finding_on_a_line_the_run_skips_says_so(tmp_path):
    script = write(tmp_path, "branch.py", """
        import torch

        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        if y.sum() > 100:
            y.mul_(2)
        y.sum().backward()
        """)
    [finding] = json.loads(verify("--format", "json", str(script)).stdout)
    assert (finding["code"], finding["location"]["row"], finding["origin"]) == ("GG001", 6, "static")
    assert finding["message"].endswith("The run on cpu did not reach this line.")


def test_a_module_class_is_built_and_fed_an_input_for_its_first_layer(tmp_path):
    write(tmp_path, "blocks.py", """
        import torch.nn as nn


        class Gate(nn.Module):
            def __init__(self, channels=3):
                super().__init__()
                self.conv = nn.Conv2d(channels, 8, 3)
                self.body = nn.Sequential(nn.Sigmoid(), nn.ReLU(inplace=True))

            def forward(self, x):
                return self.body(self.conv(x))
        """)
    run = verify("--format", "json", "--target", "Gate", "blocks.py", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    runtime = [(f["code"], f["location"]["row"], f["origin"]) for f in json.loads(run.stdout)]
    assert ("GG001", 8, "both") in runtime  # the ReLU's construction line: nn.Sequential calls it


def test_target_settings_come_from_pyproject(tmp_path):
    write(tmp_path, "pyproject.toml", """
        [tool.gradguard.verify.targets.Scaled]
        args = [5]
        inputs = [[2, 5]]
        """)
    write(tmp_path, "scaled.py", """
        import torch
        import torch.nn as nn


        class Scaled(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.width = width

            def forward(self, x):
                y = torch.exp(x)
                y *= self.width
                return y
        """)
    run = verify("--format", "json", "--target", "Scaled", "scaled.py", cwd=tmp_path)
    assert [(f["code"], f["location"]["row"]) for f in json.loads(run.stdout)] == [("GG001", 12)]


def test_an_unknown_target_cannot_be_run(tmp_path):
    write(tmp_path, "empty.py", "import torch\n")
    run = verify("--target", "Missing", "empty.py", cwd=tmp_path)
    assert run.returncode == 2
    assert "gradguard: could not verify empty.py: empty.py defines no class or function named 'Missing'" in run.stderr


def test_a_class_needing_arguments_says_which_and_what_ran_before_still_counts(tmp_path, corpus):
    case = (corpus / "cases" / "seed_resnet_relu_then_add.py").read_text()
    (tmp_path / "block.py").write_text(case)  # its top level runs `Block(8)`: GG001 at line 16
    run = verify("--format", "json", "--target", "Block", "block.py", cwd=tmp_path)
    assert run.returncode == 2
    found = {(f["code"], f["location"]["row"], f["origin"]) for f in json.loads(run.stdout)}
    assert found == {("GG001", 16, "both"), ("GV002", 1, "runtime")}
    assert ("could not verify block.py: cannot call Block with no arguments (missing a required argument: "
            "'dim'): give `args`/`kwargs` or a `factory` for it in [tool.gradguard.verify.targets]") in run.stderr


BLOCK = """
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 8)

        def forward(self, x, pad_mask):
            y = torch.sigmoid(self.proj(x))
            y += 1
            return y * pad_mask
    """
PASS_INPUTS = ("pass --input SHAPE[:DTYPE] once for each of its inputs (such as --input 2,64 --input 2,64:bool), "
               "or set `inputs` or a `factory` in [tool.gradguard.verify.targets]")


def test_a_forward_needing_more_inputs_than_inferred_is_gv002_never_gv001(tmp_path):
    write(tmp_path, "block.py", BLOCK)
    run = verify("--format", "json", "--target", "Block", "block.py", cwd=tmp_path)
    assert run.returncode == 2
    problem = f"could not infer inputs for `Block.forward(x, pad_mask)`; {PASS_INPUTS}"
    assert run.stderr.endswith(f"gradguard: could not verify block.py: {problem}\n")
    found = [(f["code"], f["location"]["row"], f["origin"], f["message"]) for f in json.loads(run.stdout)]
    assert ("GV002", 1, "runtime", f"gradguard could not verify this file: {problem}") in found
    assert not any(code == "GV001" for code, *_ in found) and "Traceback" not in run.stderr


def test_inputs_given_with_input_run_the_target(tmp_path):
    write(tmp_path, "block.py", BLOCK)
    run = verify("--format", "json", "--target", "Block", "--input", "2,8", "--input", "2,8:bool", "block.py",
                 cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert [(f["code"], f["location"]["row"], f["origin"]) for f in json.loads(run.stdout)] == [("GG001", 12, "both")]
    short = verify("--target", "Block", "--input", "2,8", "block.py", cwd=tmp_path)
    assert short.returncode == 2
    assert f"could not verify block.py: `Block.forward(x, pad_mask)` cannot take the 1 input given; {PASS_INPUTS}" \
        in short.stderr


@pytest.mark.parametrize(("args", "error"), [
    (["--input", "2,8", "block.py"], "gradguard: --input needs --target: the inputs are those of the target's forward\n"),
    (["--target", "Block", "--input", "2,8:complex", "block.py"], "argument --input: '2,8:complex' is not SHAPE[:DTYPE]"),
])
def test_input_usage_errors(tmp_path, args, error):
    write(tmp_path, "block.py", BLOCK)
    run = verify(*args, cwd=tmp_path)
    assert (run.returncode, run.stdout) == (2, "")
    assert error in run.stderr


def test_a_first_layer_that_gives_no_input_is_gv002(tmp_path):
    write(tmp_path, "norm.py", """
        import torch.nn as nn


        class Norm(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.LayerNorm(8)

            def forward(self, x):
                return self.norm(x).sigmoid().relu_()
        """)
    run = verify("--target", "Norm", "norm.py", cwd=tmp_path)
    assert run.returncode == 2
    assert (f"could not verify norm.py: could not infer inputs for `Norm.forward(x)` (its first layer is no Linear, "
            f"Conv or Embedding); {PASS_INPUTS}") in run.stderr
    assert verify("--target", "Norm", "--input", "2,8", "norm.py", cwd=tmp_path).returncode == 1


def test_a_user_exception_is_reported_with_its_traceback(tmp_path):
    write(tmp_path, "boom.py", """
        import torch


        def scale(x):
            raise ValueError("bad scale")


        scale(torch.ones(2))
        """)
    run = verify("--format", "json", "boom.py", cwd=tmp_path)
    assert run.returncode == 1
    [finding] = json.loads(run.stdout)
    assert (finding["code"], finding["location"]["row"], finding["origin"]) == ("GV001", 5, "runtime")
    assert finding["message"] == "your code raised `ValueError: bad scale` running on cpu; the run stopped here"
    assert [(r["location"]["row"], r["message"]) for r in finding["related"]] == [(8, "called from here")]
    assert finding["traceback"].startswith("Traceback (most recent call last):\n  File \"boom.py\", line 8")
    assert "ValueError: bad scale" in run.stderr and "gradguard/verify" not in run.stderr


def test_the_users_output_goes_to_stderr_and_json_stays_pure(tmp_path):
    script = write(tmp_path, "chatty.py", """
        import sys
        import torch

        print("epoch 1 done")
        sys.stdout.write("loss 0.5\\n")
        """)
    run = verify("--format", "json", str(script))
    assert (run.returncode, json.loads(run.stdout)) == (0, [])
    assert "epoch 1 done" in run.stderr and "loss 0.5" in run.stderr


def test_a_run_past_its_timeout_is_killed_with_its_process_group(tmp_path):
    script = write(tmp_path, "spin.py", """
        import pathlib, subprocess, sys

        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pathlib.Path(__file__).with_suffix(".pid").write_text(str(child.pid))
        while True:
            pass
        """)
    started = time.monotonic()
    run = verify("--format", "json", "--timeout", "2", str(script))
    assert time.monotonic() - started < 60
    assert run.returncode == 2
    [finding] = json.loads(run.stdout)
    assert finding["code"] == "GV002"
    assert finding["message"] == ("gradguard could not verify this file: the run took longer than 2 s and was "
                                  "stopped (every process it started killed)")
    pid = (tmp_path / "spin.pid").read_text()
    status = Path(f"/proc/{pid}/status")
    time.sleep(0.2)
    assert not status.exists() or "zombie" in status.read_text()


def test_a_script_that_does_not_parse_stops_at_its_syntax_error(tmp_path):
    write(tmp_path, "half.py", """
        import torch
        x = torch.ones(2,
        """)
    run = verify("--format", "json", "half.py", cwd=tmp_path)
    assert {(f["code"], f["location"]["row"], f["location"]["column"], f["origin"]) for f in json.loads(run.stdout)} \
        == {("GG000", 2, 15, "static"), ("GV001", 2, 15, "runtime")}
    assert run.stderr.startswith('  File "half.py", line 2\n    x = torch.ones(2,\n                  ^\n'
                                 "SyntaxError: '(' was never closed\n"), run.stderr


@pytest.mark.skipif(subprocess.run([sys.executable, "-c", "import torch; assert not torch.cuda.is_available()"]
                                   ).returncode != 0, reason="a GPU is present")
def test_device_auto_falls_back_to_the_cpu_and_cuda_cannot_run(tmp_path):
    script = write(tmp_path, "tiny.py", """
        import torch

        y = torch.randn(3, requires_grad=True).exp()
        y.add_(1)
        """)
    [finding] = json.loads(verify("--format", "json", "--device", "auto", str(script)).stdout)
    assert finding["device"] == "cpu"
    run = verify("--device", "cuda", str(script))
    assert run.returncode == 2
    assert "torch sees no CUDA device here" in run.stderr


# The editor command ---------------------------------------------------------------------------

def _lsp_fixture(trusted: bool):
    @pytest_lsp.fixture(config=ClientServerConfig(server_command=[*GRADGUARD, "lsp"]))
    async def client(lsp_client: LanguageClient):
        await lsp_client.initialize_session(lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"trusted": trusted, "verify": {"device": "cpu"}}))
        yield
        await lsp_client.shutdown_session()
    return client


trusted_client = _lsp_fixture(True)
untrusted_client = _lsp_fixture(False)
SIGMOID_RELU = CORPUS / "cases" / "sigmoid_then_relu_inplace.py"


async def _open(client: LanguageClient, path: Path) -> str:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=path.read_text())))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.usefixtures("corpus")
async def test_the_editor_command_publishes_the_merged_findings(trusted_client: LanguageClient):
    uri = await _open(trusted_client, SIGMOID_RELU)
    lenses = await trusted_client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri)))
    assert [(lens.range.start.line, lens.command.title, list(lens.command.arguments)) for lens in lenses] == [
        (0, "Verify in-place safety", [uri]), (5, "Verify in-place safety", [uri, "Gate"])]
    result = await trusted_client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="gradguard.verify", arguments=[uri]))
    assert result["device"] == "cpu"
    assert [(f["code"], f["line"], f["origin"]) for f in result["findings"]] == [("GG001", 14, "both")]
    [diagnostic] = trusted_client.diagnostics[uri]  # published before the command answered
    assert diagnostic.range.start.line == 13 and diagnostic.message.endswith("Confirmed by running it on cpu.")


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.usefixtures("corpus")
async def test_the_editor_command_is_refused_in_an_untrusted_workspace(untrusted_client: LanguageClient):
    uri = await _open(untrusted_client, SIGMOID_RELU)
    with pytest.raises(Exception, match="needs a trusted workspace"):
        await untrusted_client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command="gradguard.verify", arguments=[uri]))


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.usefixtures("corpus")
async def test_the_editor_command_runs_the_projects_interpreter_from_the_settings(trusted_client: LanguageClient,
                                                                                   tmp_path: Path):
    """`interpreter` (VS Code: gradguard.interpreter) is the project's Python, as the CLI's --python:
    one without torch gives the run's problem, a GV002, and no runtime finding."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    python = tmp_path / "bare" / "bin" / "python"
    uri = await _open(trusted_client, SIGMOID_RELU)
    trusted_client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"gradguard": {
        "trusted": True, "verify": {"device": "cpu"}, "interpreter": str(python)}}))
    result = await trusted_client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="gradguard.verify", arguments=[uri]))
    assert result["interpreter"] == f"{python} (from gradguard.interpreter)"
    assert result["problem"] == (f"torch is not installed in {python} (from gradguard.interpreter); install it there, "
                                 "or name the project's interpreter with --python (the editor: gradguard.interpreter)")
    assert [(f["code"], f["line"], f["origin"]) for f in result["findings"]] == [("GV002", 1, "runtime"),
                                                                                ("GG001", 14, "static")]


def _verify_over_stdio(root: Path | None, uri: str, opened: str | None = None) -> dict:
    """The server over stdio, trusted, with the workspace folder `root` (None: an editor on a single
    file): open `uri` (with the text `opened`, if given), ask `gradguard.verify` for it; the reply."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": root.as_uri() if root else None, "capabilities": {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}] if root else None,
            "initializationOptions": {"trusted": True, "verify": {"device": "cpu"}}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        *([{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": opened}}}] if opened is not None else []),
        {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
         "params": {"command": "gradguard.verify", "arguments": [uri]}},
    ]
    server = subprocess.Popen([*GRADGUARD, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    try:
        server.stdin.write(b"".join(framed(json.dumps(m).encode()) for m in messages))
        server.stdin.flush()
        while (message := read_message(server.stdout)) is not None:
            if message.get("id") == 2:
                return message
        pytest.fail("no reply to the verify request")
    finally:
        server.kill()
        server.wait()


@pytest.mark.parametrize("how", ["inside", "dot-dot", "root-dot-dot", "outside", "symlink", "untitled", "http"])
def test_the_editor_command_runs_only_files_in_the_workspace(tmp_path, how):
    """Only a `file:` URI whose file, `..` and symbolic links resolved, is inside a workspace folder
    is run; an `untitled:` or `http:` URI is never taken for a local path."""
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    inside = write(workspace, "run.py", f"import pathlib\npathlib.Path({str(tmp_path / 'ran')!r}).write_text('yes')\n")
    escaped = write(outside, "run.py", inside.read_text())
    (workspace / "link.py").symlink_to(escaped)
    uri = {"inside": inside.as_uri(), "dot-dot": f"{workspace.as_uri()}/../outside/run.py",
           "root-dot-dot": f"file:///../..{escaped}", "outside": escaped.as_uri(),
           "symlink": (workspace / "link.py").as_uri(), "untitled": f"untitled:{inside}",
           "http": f"http://example.com{inside}"}[how]
    reply = _verify_over_stdio(workspace, uri, opened=inside.read_text())
    if how == "inside":
        assert "error" not in reply and reply["result"]["problem"] is None, reply
        assert (tmp_path / "ran").read_text() == "yes"
        return
    assert reply["error"]["code"] == -32600
    assert reply["error"]["message"] == (
        f"gradguard.verify runs only files on disk (file: URIs), not {uri}: save it in the workspace first"
        if how in ("untitled", "http") else
        f"gradguard.verify runs only files inside the workspace's folders, and {escaped} is outside them")
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("opened", [True, False])
def test_without_a_workspace_folder_the_editor_command_runs_only_open_files(tmp_path, opened):
    script = write(tmp_path, "run.py", f"import pathlib\npathlib.Path({str(tmp_path / 'ran')!r}).write_text('yes')\n")
    reply = _verify_over_stdio(None, script.as_uri(), opened=script.read_text() if opened else None)
    if opened:
        assert "error" not in reply and reply["result"]["problem"] is None, reply
        assert (tmp_path / "ran").read_text() == "yes"
    else:
        assert reply["error"] == {"code": -32600, "message": (
            "gradguard.verify runs only the files open in the editor when no workspace folder is open, "
            f"and {script} is not open")}
        assert not (tmp_path / "ran").exists()


# Which Python runs the code ---------------------------------------------------------------------

def _environment(folder: Path) -> Path:
    """A folder that looks like a venv: an executable bin/python."""
    python = folder / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    return python


def test_the_projects_interpreter_is_found_in_the_documented_order(tmp_path, monkeypatch):
    from gradguard import project_python
    from gradguard.project_python import InterpreterError, find_interpreter

    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    write(project, "pyproject.toml", "[project]\nname = 'p'\n")
    script = write(project / "src", "train.py", "import torch\n")
    named, virtual, local, conda, editor = (_environment(tmp_path / n) for n in ("named", "virtual", "local",
                                                                                 "conda", "editor"))
    (project / ".venv").symlink_to(local.parent.parent)
    bin_ = tmp_path / "path-bin"
    bin_.mkdir()
    (bin_ / "python3").symlink_to(named)
    environ = {"VIRTUAL_ENV": str(virtual.parent.parent), "CONDA_PREFIX": str(conda.parent.parent), "PATH": str(bin_)}
    monkeypatch.setattr(project_python, "_torch_here", lambda: False)

    def found(python=None, editor_choice=str(editor), **unset):
        env = {k: v for k, v in environ.items() if k not in unset}
        chosen = find_interpreter(script, python, editor_choice, env)
        return chosen.executable, chosen.source

    assert found(str(named)) == (str(named), "--python")
    assert found(str(named.parent.parent)) == (str(named), "--python")  # an environment's folder
    assert found() == (str(virtual), "VIRTUAL_ENV")
    assert found(VIRTUAL_ENV=1) == (str(project / ".venv" / "bin" / "python"), f".venv of {project}")
    (project / ".venv").unlink()
    _environment(tmp_path / ".venv")  # above the project's root: not the project's
    assert found(VIRTUAL_ENV=1) == (str(conda), "CONDA_PREFIX")
    assert found(VIRTUAL_ENV=1, CONDA_PREFIX=1) == (str(editor), "the editor's interpreter")
    assert found(editor_choice=None, VIRTUAL_ENV=1, CONDA_PREFIX=1) == (str(bin_ / "python3"), "python3 on PATH")
    monkeypatch.setattr(project_python, "_torch_here", lambda: True)
    assert found(editor_choice=None, VIRTUAL_ENV=1, CONDA_PREFIX=1) == (
        sys.executable, "gradguard's own interpreter, which has torch")
    with pytest.raises(InterpreterError, match=r"^--python /nowhere/python: no such interpreter$"):
        found("/nowhere/python")
    with pytest.raises(InterpreterError, match=r"bin/python$"):
        found(str(tmp_path / "path-bin"))  # a folder without bin/python


def test_a_broken_torch_in_the_projects_interpreter_is_gv002(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    [site] = (tmp_path / "env" / "lib").glob("python3*/site-packages")
    (site / "torch").mkdir()
    write(site / "torch", "__init__.py", "raise ImportError('libtorch_cpu.so: cannot open shared object file')\n")
    write(tmp_path, "train.py", "import torch\n")
    python = tmp_path / "env" / "bin" / "python"
    run = verify("--python", str(python), "train.py", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.endswith(f"gradguard: could not verify train.py: torch cannot be imported in {python} "
                               "(from --python): ImportError: libtorch_cpu.so: cannot open shared object file\n")


def _old_python() -> str | None:
    """A Python older than 3.10 on this machine, if there is one."""
    candidates = [shutil.which(f"python3.{minor}") for minor in range(9, 5, -1)]
    candidates += sorted(map(str, (Path.home() / ".pyenv" / "versions").glob("3.[6-9].*/bin/python3")), reverse=True)
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import sys; print(sys.version_info < (3, 10))"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == "True":
            return candidate
    return None


def test_a_project_interpreter_older_than_3_10_is_gv002(tmp_path):
    python = _old_python()
    if python is None:
        pytest.skip("no Python older than 3.10 on this machine")
    write(tmp_path, "train.py", "import torch\n")
    run = verify("--python", python, "train.py", cwd=tmp_path)
    assert run.returncode == 2
    assert re.search(r"could not verify train\.py: \S+ \(from --python\) is Python 3\.[6-9]; verify needs Python 3\.10 "
                     r"or newer\n$", run.stderr), run.stderr


PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(scope="module")
def compiled_run(tmp_path_factory) -> dict[str, list[dict]]:
    """One `gradguard verify --format json` of two compiled programs (a GG005 and its clone-at-call twin), of the
    GG005 program changing its features through `getattr` (found only at run time) and of a compiled module whose
    compiled backward raises (GG001): findings per file."""
    if shutil.which("c++") is None and shutil.which("g++") is None:
        pytest.skip("no C++ compiler: inductor cannot compile")
    buggy = PROGRAMS / "compiled_projection_memory_bank_normalise_div_.py"
    dynamic = tmp_path_factory.mktemp("compiled") / "dynamic.py"
    dynamic.write_text(buggy.read_text().replace("features.div_(", 'getattr(features, "div_")('))
    run = verify("--format", "json", str(buggy), str(PROGRAMS / "compiled_projection_memory_bank_clone_at_call_ok.py"),
                 str(dynamic), str(PROGRAMS / "compiled_gated_module_input_noise_add_.py"))
    assert run.returncode == 1, run.stderr[-3000:]
    by_file: dict[str, list[dict]] = {}
    for item in json.loads(run.stdout):
        by_file.setdefault(Path(item["filename"]).name, []).append(item)
    return by_file


def test_a_compiled_save_changed_outside_its_region_is_confirmed_silent_under_inductor(compiled_run):
    [finding] = compiled_run["compiled_projection_memory_bank_normalise_div_.py"]
    assert (finding["code"], finding["location"]["row"], finding["origin"]) == ("GG005", 23, "both")
    assert finding["message"].endswith("Confirmed by running it on cpu.")
    assert "compiled_projection_memory_bank_clone_at_call_ok.py" not in compiled_run


def test_a_compiled_module_whose_backward_raises_too_stays_gg001(compiled_run):
    [finding] = compiled_run["compiled_gated_module_input_noise_add_.py"]
    assert (finding["code"], finding["location"]["row"], finding["origin"]) == ("GG001", 25, "both")


def test_a_silent_compiled_gradient_found_only_at_run_time_names_the_compiled_call_and_the_change(compiled_run):
    [finding] = compiled_run["dynamic.py"]
    assert (finding["code"], finding["location"]["row"], finding["origin"]) == ("GG005", 23, "runtime")
    assert finding["message"].startswith(
        '`getattr(features, "div_")(features.norm(dim=1,…` changes in place a float32[32, 16] tensor that '
        "`features @ weight` saved for backward (its input) at line 12, inside code compiled by `torch.compile` "
        '(backend "inductor") that `project(features, weight)` ran at line 22: eager, `loss.backward()` (line 26) '
        'raised "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace '
        'operation"; compiled by inductor, backward raised nothing and computed the gradients from the changed value.')
    assert [(r["location"]["row"], r["message"]) for r in finding["related"]] == [
        (12, "`features @ weight` saved the tensor for backward here (its input)"),
        (22, "the compiled `project(features, weight)` ran here"),
        (26, "eager, this raised; compiled by inductor, it computed the gradients from the changed value")]


def test_too_little_time_for_inductor_compiles_with_aot_eager_and_says_so():
    program = PROGRAMS / "compiled_projection_memory_bank_normalise_div_.py"
    run = verify("--format", "json", "--timeout", "40", str(program))
    assert run.returncode == 1, run.stderr[-3000:]
    static, runtime = sorted(json.loads(run.stdout), key=lambda f: f["origin"] == "runtime")
    assert (static["code"], static["origin"], runtime["code"], runtime["origin"]) == ("GG005", "static", "GG001",
                                                                                     "runtime")
    left = re.search(r"only (\d+) s of the run's time limit", static["message"])
    assert left is not None and 30 <= int(left[1]) <= 40, static["message"]
    reason = (f"only {left[1]} s of the run's time limit were left, too few for inductor's compilation; allow 60 s "
              "more with `timeout` in [tool.gradguard.verify]")
    assert static["message"].endswith(f"Not confirmed: the run on cpu compiled the code with aot_eager instead of "
                                      f"inductor ({reason}), and aot_eager checks saved tensors as eager does.")
    assert runtime["message"].endswith(
        f"Run compiled by aot_eager instead of inductor ({reason}), it raised too at line 26: `RuntimeError: one of the "
        "variables needed for gradient computation has been modified by an inplace operation`; aot_eager checks saved "
        "tensors as eager does: what inductor does was not checked.")


def test_without_a_cpp_compiler_verify_compiles_with_aot_eager_and_says_so(tmp_path):
    program = PROGRAMS / "compiled_projection_memory_bank_normalise_div_.py"
    run = subprocess.run([*GRADGUARD, "verify", "--device", "cpu", "--format", "json", str(program)],
                         capture_output=True, text=True, timeout=300, env={**os.environ, "PATH": str(tmp_path)})
    assert run.returncode == 1, run.stderr[-3000:]
    static = next(f for f in json.loads(run.stdout) if f["code"] == "GG005")
    assert static["message"].endswith("Not confirmed: the run on cpu compiled the code with aot_eager instead of "
                                      "inductor (no C++ compiler found, which inductor needs on the CPU), and "
                                      "aot_eager checks saved tensors as eager does.")
