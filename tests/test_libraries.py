"""Labelled programs built on installed model libraries (tests/libraries/<library>/): user code that
uses torchvision, timm and transformers layers from their wheels (`make libraries` pins them), the
way training code does.

Each program is proven by running it with torch (run_programs.py: all of them in one process, the
libraries imported once; models built with random weights, nothing downloaded): a line marked
`# expect: GGnnn` makes the program fail with that family's error, an `_ok` program trains
cleanly. gradguard must then report exactly the marked (line, code) pairs, following the names
into the libraries' own source.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from helpers import GRADGUARD, ROOT, markers

FOLDER = ROOT / "tests" / "libraries"
LIBRARIES = ("torchvision", "timm", "transformers")
PROGRAMS = sorted(p.relative_to(FOLDER).as_posix() for p in FOLDER.glob("*/*.py"))
ERRORS = {  # what torch raises for each family (the shared corpus's label.py)
    "GG001": ("modified by an inplace operation",),
    "GG002": ("leaf Variable that requires grad",),
    "GG003": ("is a view and", "A view was created in no_grad mode"),
}

# Programs the analyzer gets wrong today: name -> what it misses. Each is a strict xfail, so the
# suite flips once the analyzer finds it: then delete the entry.
KNOWN_GAPS: dict[str, str] = {}


def _require_libraries() -> None:
    missing = [name for name in LIBRARIES if importlib.util.find_spec(name) is None]
    if missing:
        pytest.fail(f"run `make libraries` first (not installed: {', '.join(missing)})", pytrace=False)


def test_program_set_is_well_formed():
    for library in LIBRARIES:
        unsafe = [p for p in PROGRAMS if p.startswith(library + "/") and not p.endswith("_ok.py")]
        assert len(unsafe) >= 8, f"{library}: {len(unsafe)} labelled programs, at least 8 wanted"
        for name in unsafe:
            assert name.replace(".py", "_ok.py") in PROGRAMS, f"{name}: no `_ok` twin that trains cleanly"
    for name in PROGRAMS:
        text = (FOLDER / name).read_text()
        assert name.endswith("_ok.py") == (not markers(FOLDER / name)), f"{name}: `_ok` programs and only they have no marker"
        assert text.startswith('"""'), f"{name}: start with a docstring saying what the program shows"
        assert ".backward(" in text, f"{name}: a program ends with a backward pass"
        assert "pretrained=True" not in text and "from_pretrained" not in text, f"{name}: random weights only"
    assert set(KNOWN_GAPS) <= set(PROGRAMS), "KNOWN_GAPS names a program that does not exist"


@pytest.mark.xdist_group("heavy")
def test_labels_agree_with_torch():
    """Every marked program raises its family's error when it runs (a GG004 one runs to its end, where it
    asserts the wrong gradient); every `_ok` program runs clean."""
    _require_libraries()
    proc = subprocess.run([sys.executable, str(FOLDER / "run_programs.py"), *PROGRAMS], capture_output=True,
                          text=True, timeout=900, cwd=FOLDER)
    assert proc.returncode == 0, proc.stderr[-3000:]
    fates = {r["file"]: r["error"] for r in map(json.loads, proc.stdout.splitlines())}
    assert sorted(fates) == PROGRAMS
    wrong = []
    for name, error in fates.items():
        codes = {code for _, code in markers(FOLDER / name)}
        if not codes or codes == {"GG004"}:  # a GG004 program runs to its end, asserting the wrong gradient itself
            if error is not None:
                wrong.append(f"{name}: expected to train cleanly, raised {error}")
            continue
        want = ERRORS[min(codes)]
        if error is None or not error.startswith("RuntimeError") or not any(w in error for w in want):
            wrong.append(f"{name}: expected {min(codes)}'s error, got {error}")
    assert not wrong, "\n".join(wrong)


@pytest.fixture(scope="module")
def reported() -> dict[str, set[tuple[int, str]]]:
    """One `gradguard check --format json --no-config` run over tests/libraries: file -> {(line, code)}."""
    _require_libraries()
    proc = subprocess.run([str(GRADGUARD), "check", "--format", "json", "--no-config", str(FOLDER)],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    found: dict[str, set[tuple[int, str]]] = {}
    for diagnostic in json.loads(proc.stdout):
        if diagnostic["severity"] in ("error", "warning"):
            name = Path(diagnostic["filename"]).relative_to(FOLDER).as_posix()
            found.setdefault(name, set()).add((diagnostic["location"]["row"], diagnostic["code"]))
    return found


@pytest.mark.xdist_group("heavy")
@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=f"analyzer gap: {KNOWN_GAPS[name]}"))
    if name in KNOWN_GAPS else name for name in PROGRAMS
])
def test_gradguard_reports_exactly_the_markers(name, reported):
    want = markers(FOLDER / name)
    got = reported.get(name, set())
    assert got == want, f"missed {sorted(want - got)}, false alarms {sorted(got - want)}"


@pytest.mark.xdist_group("heavy")
def test_the_server_reads_the_library_after_the_first_diagnostics(tmp_path):
    """In the editor, the first diagnostics do not wait for the library's files; they are read in
    the background (`$/progress`), and the finding then points into the library's own file."""
    _require_libraries()
    from test_lsp_scheduling import Server

    program = tmp_path / "mixer.py"
    program.write_text((FOLDER / "timm" / "mlp_token_residual_iadd.py").read_text())
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "scratch"\n')
    server = Server()
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "capabilities": {"window": {"workDoneProgress": True},
                             "textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
            "initializationOptions": {}}})
        server.index(lambda message: message.get("id") == 1)
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": program.as_uri(), "languageId": "python", "version": 1, "text": program.read_text()}}})

        def published(message: dict) -> bool:
            return message.get("method") == "textDocument/publishDiagnostics"

        first = server.index(published)
        assert server.log[first]["params"]["diagnostics"] == [], "the first answer does not wait for the library"
        end = server.index(lambda m: m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "end", first)
        settled = server.log[server.index(published, end)]["params"]["diagnostics"]
        assert [(d["code"], d["range"]["start"]["line"]) for d in settled] == [("GG001", 15)]
        related = [(r["location"]["uri"], r["location"]["range"]["start"]["line"]) for r in settled[0]["relatedInformation"]]
        # `self.fc1` in timm's own file saved the input (line 48)
        assert any(uri.endswith("/site-packages/timm/layers/mlp.py") and line == 47 for uri, line in related), related
        assert "`self.fc1` (timm/layers/mlp.py:48)" in settled[0]["message"], settled[0]["message"]

        server.send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": program.as_uri()}, "position": {"line": 15, "character": 8}}})
        hover = server.log[server.index(lambda message: message.get("id") == 2)]["result"]["contents"]["value"]
        assert "saved for backward: its input by `self.fc1` (timm/layers/mlp.py:48)" in hover, hover
    finally:
        server.stop()


def test_check_reads_the_libraries_of_the_interpreter_it_is_given(tmp_path):
    """`--python` names the project's interpreter: its libraries are read. One without timm leaves
    timm's names unknown, which concludes nothing: no finding, and no false alarm."""
    _require_libraries()
    program = FOLDER / "timm" / "mlp_token_residual_iadd.py"
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    fates = {}
    for python in (sys.executable, str(bare / "bin" / "python")):
        proc = subprocess.run([str(GRADGUARD), "check", "--format", "json", "--no-config", "--no-cache",
                               "--python", python, str(program)], capture_output=True, text=True, timeout=300,
                              cwd=ROOT, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")})
        assert proc.stderr == "" or "internal error" not in proc.stderr, proc.stderr
        fates[python] = [(d["code"], d["location"]["row"]) for d in json.loads(proc.stdout)]
    assert fates[sys.executable] == [("GG001", 16)]
    assert fates[str(bare / "bin" / "python")] == []


def _project_with_venv(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A project (`train.py`: USER_PROGRAM) whose `.venv` alone has `fakezoo` installed: the project,
    that `site-packages`, and the file its `bin/python` creates if it is ever run."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "scratch"\n')
    (project / "train.py").write_text(USER_PROGRAM)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project / ".venv")], check=True, timeout=120)
    [site] = (project / ".venv" / "lib").glob("python3*/site-packages")
    _fake_site(tmp_path / "built")
    shutil.copytree(tmp_path / "built" / "site-packages" / "fakezoo", site / "fakezoo")
    ran = tmp_path / "the .venv ran"
    python = project / ".venv" / "bin" / "python"
    real = os.path.realpath(python)
    python.unlink()
    python.write_text(f"#!/bin/sh\ntouch '{ran}'\nexec '{real}' \"$@\"\n")
    python.chmod(0o755)
    return project, site, ran


def _environment_without_interpreters(cache: Path) -> dict[str, str]:
    """This process's environment without an activated environment, with its own user cache."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "GRADGUARD_PYTHON")}
    return {**env, "XDG_CACHE_HOME": str(cache)}


def test_check_reads_the_libraries_of_the_projects_venv_without_being_told(tmp_path):
    """`check` finds the project's interpreter as `verify` does: `--python`, else `VIRTUAL_ENV`,
    else the project's `.venv` (then `CONDA_PREFIX`, gradguard's own if it has torch, `python3`).
    A `.venv` is read, never run (its `pyvenv.cfg` and `site-packages`): here a package installed
    only there makes the labelled GG001. The result cache keeps each interpreter's findings apart."""
    project, site, ran = _project_with_venv(tmp_path)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True, timeout=120)
    env = _environment_without_interpreters(tmp_path / "cache")

    def check(*args: str, cwd: Path = project, **more: str) -> list[tuple]:
        proc = subprocess.run([str(GRADGUARD), "check", "--format", "json", "--no-config", *args], capture_output=True,
                              text=True, timeout=300, cwd=cwd, env={**env, **more})
        assert proc.returncode in (0, 1) and proc.stderr == "", proc.stderr
        return [(d["code"], d["location"]["row"], [r["filename"] for r in d["related"]])
                for d in json.loads(proc.stdout) if d["severity"] == "error"]

    saved_in = str((site / "fakezoo" / "nets.py").resolve())  # sigmoid saved it there
    found = [("GG001", 9, [saved_in, str(project / "train.py")])]
    assert check() == found
    assert check(str(project / "train.py"), cwd=tmp_path) == found  # a file's project, wherever check runs
    assert check(VIRTUAL_ENV=str(tmp_path / "bare")) == []  # the activated environment comes first: no fakezoo
    assert check(VIRTUAL_ENV=sys.prefix) == found  # but not gradguard's own (pre-commit activates its hook's)
    assert check("--python", sys.executable) == []  # and --python before it
    assert check("--python", str(project / ".venv")) == found  # an environment's folder
    assert not ran.exists()
    fate = subprocess.run([sys.executable, str(project / "train.py")], capture_output=True, text=True, timeout=300,
                          env={**env, "PYTHONPATH": str(site)})
    assert "modified by an inplace operation" in fate.stderr, fate.stderr[-2000:]  # the label, proven by torch


@pytest.mark.xdist_group("heavy")
def test_the_server_reads_the_libraries_of_the_workspaces_venv_without_being_told(tmp_path):
    """Without the editor's `python` setting, the server reads the libraries of the project's
    interpreter as `check` finds it for the workspace, here its `.venv`, from its files: even an
    untrusted workspace runs nothing."""
    from test_lsp_scheduling import Server

    project, site, ran = _project_with_venv(tmp_path)
    program = project / "train.py"
    server = Server(env=_environment_without_interpreters(tmp_path / "cache"))
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "rootUri": project.as_uri(), "capabilities": {"window": {"workDoneProgress": True}},
            "initializationOptions": {}}})
        server.index(lambda message: message.get("id") == 1)
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": program.as_uri(), "languageId": "python", "version": 1, "text": program.read_text()}}})
        settled = server.index(lambda message: message.get("method") == "textDocument/publishDiagnostics" and any(
            d["code"] == "GG001" for d in message["params"]["diagnostics"]))
        [diagnostic] = server.log[settled]["params"]["diagnostics"]
        assert (diagnostic["code"], diagnostic["range"]["start"]["line"]) == ("GG001", 8)
        assert "(fakezoo/nets.py:13)" in diagnostic["message"], diagnostic["message"]
    finally:
        server.stop()
    assert not ran.exists()


@pytest.mark.parametrize("how", ["its .venv", "--python", "VIRTUAL_ENV", "gradguard's own VIRTUAL_ENV",
                                 "--python outside"])
def test_check_runs_no_interpreter_of_the_project(tmp_path, how):
    """`check` runs nothing of a project, even a `.venv` without `pyvenv.cfg` and a file importing
    a package installed nowhere (which only jedi could place): the `site-packages` are read from the
    environment's files (here `fakezoo`'s, which makes the labelled GG001), and jedi runs in
    gradguard's own interpreter over them, whatever the project's `.jedi/project.json` says. No
    other interpreter is run either (`--python` outside the project, with no libraries)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "scratch"\n')
    (project / "train.py").write_text(USER_PROGRAM.replace("import fakezoo\n", "import fakezoo\nimport notinstalled.layers\n"
                                                           "from notinstalled.blocks import Block\n"))
    _fake_site(project / ".venv" / "lib" / "python3.12")
    (project / ".jedi").mkdir()
    (project / ".jedi" / "project.json").write_text(json.dumps(
        [1, {"path": str(project), "environment_path": str(project / ".venv"), "load_unsafe_extensions": True,
             "sys_path": [str(project)]}]))
    ran = tmp_path / "an interpreter ran"
    for python in (project / ".venv" / "bin" / "python", tmp_path / "elsewhere" / "bin" / "python"):
        python.parent.mkdir(parents=True)
        python.write_text(f"#!/bin/sh\necho \"$0\" >> '{ran}'\nexec '{sys.executable}' \"$@\"\n")
        python.chmod(0o755)
    args, more = {"its .venv": ([], {}), "--python": (["--python", ".venv/bin/python"], {}),
                  "VIRTUAL_ENV": ([], {"VIRTUAL_ENV": str(project / ".venv")}),
                  "gradguard's own VIRTUAL_ENV": ([], {"VIRTUAL_ENV": sys.prefix}),
                  "--python outside": (["--python", str(tmp_path / "elsewhere" / "bin" / "python")], {})}[how]
    proc = subprocess.run([str(GRADGUARD), "check", "--format", "json", "--no-cache", "--no-config", *args, "train.py"],
                          capture_output=True, text=True, timeout=300, cwd=project,
                          env={**_environment_without_interpreters(tmp_path / "cache"), **more})
    assert proc.stderr == "", proc.stderr
    found = [(d["code"], d["location"]["row"]) for d in json.loads(proc.stdout) if d["severity"] == "error"]
    assert found == ([] if how == "--python outside" else [("GG001", 11)])
    assert not ran.exists(), ran.read_text()


def test_an_environments_site_packages_are_read_from_its_files(tmp_path, monkeypatch):
    from gradguard.project_python import site_packages

    def folders(*paths: str) -> None:
        for path in paths:
            (tmp_path / path).mkdir(parents=True)

    folders("venv/bin", "venv/lib/python3.12/site-packages", "venv/lib/python3.11/site-packages",
            "base/bin", "base/lib/python3.12/site-packages", "conda/conda-meta", "conda/lib/python3.10/site-packages",
            "usr/bin")
    config = "home = {base}/bin\ninclude-system-site-packages = {system}\nversion_info = 3.12.1\n"
    (tmp_path / "venv" / "pyvenv.cfg").write_text(config.format(base=tmp_path / "base", system="false"))
    assert site_packages(str(tmp_path / "venv" / "bin" / "python")) == [tmp_path / "venv/lib/python3.12/site-packages"]
    assert site_packages(str(tmp_path / "venv")) == [tmp_path / "venv/lib/python3.12/site-packages"]
    (tmp_path / "venv" / "pyvenv.cfg").write_text(config.format(base=tmp_path / "base", system="true"))
    assert site_packages(str(tmp_path / "venv" / "bin" / "python")) == [
        tmp_path / "venv/lib/python3.12/site-packages", tmp_path / "base/lib/python3.12/site-packages"]
    assert site_packages(str(tmp_path / "conda" / "bin" / "python")) == [tmp_path / "conda/lib/python3.10/site-packages"]
    folders("usr/lib/python3.12/site-packages", "usr/local/lib/python3.12/dist-packages", "usr/lib/python3/dist-packages",
            "user/lib/python3.12/site-packages")
    (tmp_path / "usr" / "bin" / "python3.12").write_text("")
    (tmp_path / "usr" / "bin" / "python3").symlink_to("python3.12")
    monkeypatch.setenv("PYTHONUSERBASE", str(tmp_path / "user"))
    assert site_packages(str(tmp_path / "usr" / "bin" / "python3")) == [  # in no environment: its installation's
        tmp_path / "user/lib/python3.12/site-packages", tmp_path / "usr/lib/python3.12/site-packages",
        tmp_path / "usr/local/lib/python3.12/dist-packages", tmp_path / "usr/lib/python3/dist-packages"]


def test_an_installations_site_packages_read_from_its_files_are_those_it_imports_from():
    """The base interpreter of gradguard's own venv, read without running it, has the `site-packages`
    it reports when it runs."""
    from gradguard.project_python import site_packages

    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    reported = json.loads(subprocess.run([str(base), "-c", "import json, sys; print(json.dumps(sys.path))"],
                                         capture_output=True, text=True, check=True, timeout=60, env=env).stdout)
    assert site_packages(str(base)) == [Path(p) for p in reported
                                        if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]


def test_check_refuses_an_interpreter_that_does_not_exist(tmp_path):
    (tmp_path / "train.py").write_text("import torch\n")
    proc = subprocess.run([str(GRADGUARD), "check", "--no-config", "--python", str(tmp_path / "nope" / "python"),
                           "train.py"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"gradguard: --python {tmp_path / 'nope' / 'python'}: no such interpreter\n"


FAKE_PACKAGE = {
    "__init__.py": "from ._factory import create_model\nfrom .nets import *\n",
    "_registry.py": "_entrypoints = {}\n\n\ndef register_model(fn):\n    _entrypoints[fn.__name__] = fn\n    return fn\n",
    "_factory.py": "from ._registry import _entrypoints\n\n\ndef create_model(model_name, **kwargs):\n"
                   "    return _entrypoints[model_name](**kwargs)\n",
    "nets.py": "import torch\nimport torch.nn as nn\n\nfrom ._registry import register_model\n\n\n"
               "class GateNet(nn.Module):\n    def __init__(self, width=4):\n        super().__init__()\n"
               "        self.fc = nn.Linear(width, width)\n\n    def forward(self, x):\n"
               "        return torch.sigmoid(self.fc(x))\n\n\n@register_model\ndef gate_net(**kwargs):\n"
               "    return GateNet(**kwargs)\n",
}
USER_PROGRAM = '''import torch
import fakezoo
from fakezoo import GateNet

net = fakezoo.create_model("gate_net", width=4)
other = GateNet(4)
x = torch.randn(2, 4)
y = net(x)
y += 1  # expect: GG001
z = other(x)
z = z + 1
(y.sum() + z.sum()).backward()
'''


def test_a_registry_and_star_imports_of_an_installed_package_are_read_once_and_cached(tmp_path):
    """A package found on the interpreter's path (here through PYTHONPATH): `create_model("name")`
    runs the function its `@register_model` decorator registered (indexed from the package's
    source, no name table), a star import re-exports its classes; the index and the package's
    trees land in the user's cache directory, and a second run, which reads them, finds the same."""
    site = tmp_path / "site-packages"
    (site / "fakezoo").mkdir(parents=True)
    for name, text in FAKE_PACKAGE.items():
        (site / "fakezoo" / name).write_text(text)
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(USER_PROGRAM)
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CACHE_HOME": str(cache)}
    runs = []
    for _ in range(2):
        proc = subprocess.run([str(GRADGUARD), "check", "--format", "json", "--no-config", "--no-cache",
                               str(project / "train.py")], capture_output=True, text=True, timeout=300, cwd=project,
                              env=env)
        assert "internal error" not in proc.stderr, proc.stderr
        runs.append([(d["code"], d["location"]["row"], d["related"][0]["filename"] if d.get("related") else None)
                     for d in json.loads(proc.stdout) if d["severity"] == "error"])
        if not runs[1:]:
            assert sorted(p.name.split("-")[0] for p in (cache / "gradguard" / "packages").iterdir()) == ["fakezoo"]
            assert len(list((cache / "gradguard" / "readings").glob("fakezoo-*/*.pickle"))) >= 3
    assert runs[0] == [("GG001", 9, str((site / "fakezoo" / "nets.py").resolve()))]  # sigmoid saved it there
    assert runs[1] == runs[0]
    fate = subprocess.run([sys.executable, str(project / "train.py")], capture_output=True, text=True, timeout=300,
                          env=env)
    assert "modified by an inplace operation" in fate.stderr, fate.stderr[-2000:]  # the label, proven by torch


def test_the_editor_names_the_projects_interpreter():
    from gradguard.lsp.settings import EditorSettings, read_editor_settings

    settings, error = read_editor_settings({"gradguard": {"python": "/opt/project/.venv/bin/python"}}, EditorSettings())
    assert error is None and settings.python == "/opt/project/.venv/bin/python"
    assert read_editor_settings({"select": ["GG001"]}, settings)[0].python is None  # a new table without it: this one's


def test_the_interpreter_verify_runs_is_the_one_whose_libraries_are_read_in_a_trusted_workspace():
    from gradguard.lsp.settings import EditorSettings, read_editor_settings

    named = {"interpreter": "/opt/project/.venv/bin/python", "activeInterpreter": "/usr/bin/python3"}
    assert read_editor_settings({**named, "trusted": True}, EditorSettings())[0].python == named["interpreter"]
    assert read_editor_settings({"activeInterpreter": "/usr/bin/python3", "trusted": True},
                                EditorSettings())[0].python == "/usr/bin/python3"
    assert read_editor_settings(named, EditorSettings())[0].python is None  # untrusted: finding libraries runs it


@pytest.mark.xdist_group("heavy")
def test_the_server_asks_jedi_in_the_background_for_names_only_it_places(tmp_path):
    """`scripts/train.py` imports `models.gates` from the project's root, which the module-path rules
    (from the script's folder) do not find: jedi does, in a process of its own, after the first
    diagnostics; the document is then analysed again with the name placed."""
    from test_lsp_scheduling import Server

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "scratch"\n')
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "gates.py").write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass Gate(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
        "        return torch.sigmoid(self.fc(x))\n")
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "train.py"
    script.write_text("import torch\nfrom models.gates import Gate\n\ng = Gate()\ny = g(torch.randn(2, 4))\n"
                      "y += 1\ny.sum().backward()\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})  # as run from the project's root
    assert "modified by an inplace operation" in proc.stderr, proc.stderr[-2000:]  # the label, proven by torch
    server = Server()
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "capabilities": {"window": {"workDoneProgress": True}}, "initializationOptions": {}}})
        server.index(lambda message: message.get("id") == 1)
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": script.as_uri(), "languageId": "python", "version": 1, "text": script.read_text()}}})

        def published(found: list) -> Callable[[dict], bool]:
            return lambda message: (message.get("method") == "textDocument/publishDiagnostics"
                                    and [(d["code"], d["range"]["start"]["line"])
                                         for d in message["params"]["diagnostics"]] == found)

        first = server.index(lambda message: message.get("method") == "textDocument/publishDiagnostics")
        assert server.log[first]["params"]["diagnostics"] == []
        server.index(published([("GG001", 5)]), first)
    finally:
        server.stop()


def _fake_site(root: Path, files: dict[str, str] = FAKE_PACKAGE) -> Path:
    """A `site-packages` folder holding the package `fakezoo` (`files`)."""
    (root / "site-packages" / "fakezoo").mkdir(parents=True)
    for name, text in files.items():
        (root / "site-packages" / "fakezoo" / name).write_text(text)
    return root / "site-packages"


def _check_in_process(program: Path, cache: Path) -> tuple[list[tuple], list[str]]:
    """The findings of `program` (code, line, message, related places) with a fresh project index
    and the user cache `cache`, and the installed files whose top level it interpreted."""
    from gradguard.analysis.interpreter import read_top_level
    from gradguard.analysis.libraries import Environment
    from gradguard.analysis.project import ProjectIndex
    from gradguard.config import Settings
    from gradguard.engine import analyse_document
    from gradguard.source.document import Document

    interpreted: list[str] = []

    def reader(module, path, project, text):
        if project.is_library(path):
            interpreted.append(Path(path).name)
        return read_top_level(module, path, project, text)

    project = ProjectIndex(reader, use_jedi=False, environment=Environment(cache=cache))
    findings = analyse_document(Document.parse(str(program), program.read_text()), Settings(), project)
    return ([(f.code, f.span.start.line, f.message, [(r.filename, r.span.start.line) for r in f.related])
             for f in findings], sorted(interpreted))


def test_a_second_index_takes_the_library_top_levels_from_the_user_cache(tmp_path, monkeypatch):
    """What an installed file's top level binds (its classes, functions, imports) is kept with its
    tree: a second project index (a second run, another editor session) interprets none of it
    again and finds the same; an edited library file is read again, and its new code is what counts."""
    site = _fake_site(tmp_path)
    monkeypatch.syspath_prepend(str(site))
    program = tmp_path / "train.py"
    program.write_text(USER_PROGRAM)
    cache = tmp_path / "cache"
    first, interpreted = _check_in_process(program, cache)
    assert [f[:2] for f in first] == [("GG001", 9)]
    assert interpreted == ["__init__.py", "_factory.py", "nets.py"]
    assert _check_in_process(program, cache) == (first, [])

    nets = site / "fakezoo" / "nets.py"
    nets.write_text(nets.read_text().replace("return torch.sigmoid(self.fc(x))", "return self.fc(x) * 2"))
    assert _check_in_process(program, cache) == ([], ["nets.py"])  # `* 2` saves nothing that `+=` changes
    fate = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(site)})
    assert fate.returncode == 0, fate.stderr[-2000:]  # and torch agrees: it trains


def test_library_readings_kept_by_another_version_of_gradguard_are_read_again_and_replaced(tmp_path, monkeypatch):
    """An entry names the code that wrote it: another gradguard (here: its code changed) reads the
    file again and replaces the entry, so the cache does not grow with every version."""
    from gradguard.analysis import libraries

    monkeypatch.syspath_prepend(str(_fake_site(tmp_path)))
    program = tmp_path / "train.py"
    program.write_text(USER_PROGRAM)
    first, _ = _check_in_process(program, tmp_path / "cache")
    entries = sorted((tmp_path / "cache" / "readings").rglob("*.pickle"))
    assert len(entries) == 3
    monkeypatch.setattr(libraries, "source_stamp", lambda: "another gradguard")
    assert _check_in_process(program, tmp_path / "cache") == (first, ["__init__.py", "_factory.py", "nets.py"])
    assert _check_in_process(program, tmp_path / "cache") == (first, [])
    assert sorted((tmp_path / "cache" / "readings").rglob("*.pickle")) == entries


def test_a_library_top_level_holding_a_tensor_keeps_only_its_tree(tmp_path, monkeypatch):
    """A tensor's version counter is numbered per process: a top level that binds one (`SCALE =
    torch.ones(4)`) is interpreted again by every run; the package's other files are not."""
    files = {**FAKE_PACKAGE, "nets.py": FAKE_PACKAGE["nets.py"] + "\n\nSCALE = torch.ones(4)\n"}
    monkeypatch.syspath_prepend(str(_fake_site(tmp_path, files)))
    program = tmp_path / "train.py"
    program.write_text(USER_PROGRAM)
    first, _ = _check_in_process(program, tmp_path / "cache")
    assert [f[:2] for f in first] == [("GG001", 9)]
    assert _check_in_process(program, tmp_path / "cache") == (first, ["nets.py"])


def test_a_model_whose_nn_module_base_is_in_another_file_of_its_package_is_called(tmp_path, monkeypatch):
    """transformers' `BertModel(BertPreTrainedModel)`, `BertPreTrainedModel(PreTrainedModel)`,
    `PreTrainedModel(nn.Module)` in another file, which a library's top level does not read: the
    package's index says which of its classes derive from `nn.Module`, so calling the model runs its
    `forward` (and a base without one still makes its subclasses modules)."""
    nets = FAKE_PACKAGE["nets.py"].replace("import torch.nn as nn\n", "import torch.nn as nn\n\nfrom .base import ZooModel\n")
    nets = nets.replace("class GateNet(nn.Module):", "class GatePreTrained(ZooModel):\n    pass\n\n\nclass GateNet(GatePreTrained):")
    files = {**FAKE_PACKAGE, "nets.py": nets,
             "base.py": "import torch.nn as nn\n\n\nclass ZooModel(nn.Module):\n    def post_init(self):\n        pass\n"}
    site = _fake_site(tmp_path, files)
    monkeypatch.syspath_prepend(str(site))
    program = tmp_path / "train.py"
    program.write_text(USER_PROGRAM)
    findings, interpreted = _check_in_process(program, tmp_path / "cache")
    assert [f[:2] for f in findings] == [("GG001", 9)]
    assert "base.py" not in interpreted
    fate = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(site)})
    assert "modified by an inplace operation" in fate.stderr, fate.stderr[-2000:]  # the label, proven by torch


def test_a_library_top_level_that_reads_another_package_keeps_only_its_tree(tmp_path, monkeypatch):
    """What `WIDTH = SETTINGS["width"]` binds depends on another package's file, which the entry's
    key does not cover: that top level is interpreted again by every run."""
    files = {**FAKE_PACKAGE, "nets.py": "from othertools import SETTINGS\n\nWIDTH = SETTINGS['width']\n"
             + FAKE_PACKAGE["nets.py"]}
    site = _fake_site(tmp_path, files)
    (site / "othertools").mkdir()
    (site / "othertools" / "__init__.py").write_text("SETTINGS = {'width': 4}\n")
    monkeypatch.syspath_prepend(str(site))
    program = tmp_path / "train.py"
    program.write_text(USER_PROGRAM)
    first, interpreted = _check_in_process(program, tmp_path / "cache")
    assert [f[:2] for f in first] == [("GG001", 9)]
    assert interpreted == ["__init__.py", "__init__.py", "_factory.py", "nets.py"]  # othertools's too
    assert _check_in_process(program, tmp_path / "cache") == (first, ["nets.py"])


@pytest.mark.parametrize("damage", ["corrupt", "unwritable"])
def test_a_damaged_or_unwritable_user_cache_changes_nothing_but_the_time(tmp_path, damage):
    """Entries that are not ours (truncated, garbage, another object) are read past; a cache folder
    that cannot be created is left alone. The findings are the same, and nothing fails."""
    site = _fake_site(tmp_path)
    program = tmp_path / "train.py"
    program.write_text(USER_PROGRAM)
    cache = tmp_path / "cache"

    def check(cache: Path) -> subprocess.CompletedProcess:
        return subprocess.run([str(GRADGUARD), "check", "--format", "json", "--no-config", "--no-cache",
                               str(program)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                              env={**os.environ, "PYTHONPATH": str(site), "XDG_CACHE_HOME": str(cache)})

    clean = check(cache)
    if damage == "corrupt":
        entries = sorted(p for p in (cache / "gradguard").rglob("*") if p.is_file())
        assert len(entries) == 4  # the package's index, the readings of three of its files
        for number, entry in enumerate(entries):
            broken = [entry.read_bytes()[:100], b"\x80\x05not a pickle", pickle.dumps(["another"])][number % 3]
            entry.write_bytes(broken)
    else:
        cache = tmp_path / "not-a-folder"
        cache.write_text("a file where the cache folder would be\n")
    damaged = check(cache)
    assert (damaged.returncode, damaged.stdout, damaged.stderr) == (clean.returncode, clean.stdout, clean.stderr)
    assert [(d["code"], d["location"]["row"]) for d in json.loads(damaged.stdout)] == [("GG001", 9)]
