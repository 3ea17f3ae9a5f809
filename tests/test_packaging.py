"""gradguard as users install it: from its wheel, in a venv of its own without torch (pipx, `uv tool`),
verifying a project whose own interpreter has torch; and the wheel beside a user's torch.

`make packaging` builds the wheel and sdist from the tree (dist/) and the two venvs
(.venv-packaging/tool: gradguard from the wheel, no torch; .venv-packaging/project: torch only).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, made_by, write

DIST = ROOT / "dist"
TOOL = ROOT / ".venv-packaging" / "tool"
PROJECT = ROOT / ".venv-packaging" / "project"
SCRIPT = """\
import torch

x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
y.mul_(2)
y.sum().backward()
"""


@pytest.fixture(scope="module")
def venvs() -> tuple[Path, Path]:
    made_by("make packaging", TOOL / "bin" / "gradguard", PROJECT / "bin" / "python")
    return TOOL, PROJECT


def wheel() -> Path:
    made_by("make packaging", DIST / ".stamp")
    [found] = DIST.glob("gradguard-*.whl")
    return found


def _bare_env(**extra: str) -> dict[str, str]:
    """The environment without an activated venv or conda, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH")}
    return {**env, **extra}


def gradguard(tool: Path, *args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(tool / "bin" / "gradguard"), *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=env or _bare_env())


def has(python: Path, module: str) -> bool:
    return subprocess.run([str(python), "-c", f"import {module}"], capture_output=True).returncode == 0


def test_the_venvs_are_what_the_tests_claim(venvs):
    tool, project = venvs
    assert not has(tool / "bin" / "python", "torch")
    assert has(project / "bin" / "python", "torch") and not has(project / "bin" / "python", "gradguard")


def test_verify_with_python_runs_the_code_under_the_projects_torch(venvs, tmp_path):
    tool, project = venvs
    write(tmp_path / "train.py", SCRIPT)
    run = gradguard(tool, "verify", "--device", "cpu", "--format", "json", "--python", str(project / "bin" / "python"),
                    "train.py", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    [finding] = json.loads(run.stdout)
    assert (finding["code"], finding["location"]["row"], finding["origin"]) == ("GG001", 5, "both")
    assert finding["message"].endswith("Confirmed by running it on cpu.")


@pytest.mark.parametrize("how", ["VIRTUAL_ENV", ".venv", "CONDA_PREFIX", "environment folder"])
def test_the_projects_interpreter_is_found_without_python(venvs, tmp_path, how):
    tool, project = venvs
    write(tmp_path / "pyproject.toml", "[project]\nname = 'p'\n")
    write(tmp_path / "src" / "train.py", SCRIPT)
    env, args = _bare_env(), []
    if how == ".venv":
        (tmp_path / ".venv").symlink_to(project)
    elif how == "environment folder":
        args = ["--python", str(project)]
    else:
        env[how] = str(project)
    run = gradguard(tool, "verify", "--device", "cpu", "--format", "json", *args, "src/train.py", cwd=tmp_path, env=env)
    assert run.returncode == 1, run.stderr
    assert [(f["code"], f["origin"]) for f in json.loads(run.stdout)] == [("GG001", "both")]


def test_an_interpreter_without_torch_is_gv002_with_exit_2(venvs, tmp_path):
    tool, _ = venvs
    write(tmp_path / "train.py", SCRIPT)
    python = tool / "bin" / "python"
    run = gradguard(tool, "verify", "--device", "cpu", "--python", str(python), "train.py", cwd=tmp_path)
    assert run.returncode == 2
    problem = (f"torch is not installed in {python} (from --python); install it there, or name the project's "
               "interpreter with --python (the editor: gradguard.interpreter)")
    assert f"gradguard: could not verify train.py: {problem}" in run.stderr
    # the static finding stands; the run not done is no finding "found at run time"
    assert "Found 1 problem (0 confirmed at run time, 0 found only at run time)." in run.stderr
    json_run = gradguard(tool, "verify", "--device", "cpu", "--format", "json", "--python", str(python), "train.py",
                         cwd=tmp_path)
    found = {(f["code"], f["origin"], f["message"]) for f in json.loads(json_run.stdout)}
    assert ("GV002", "runtime", f"gradguard could not verify this file: {problem}") in found
    assert json_run.returncode == 2


def test_python3_on_path_is_the_last_resort(venvs, tmp_path):
    tool, _ = venvs
    write(tmp_path / "train.py", SCRIPT)
    run = gradguard(tool, "verify", "--device", "cpu", "train.py", cwd=tmp_path,
                    env=_bare_env(PATH=f"{tool / 'bin'}:/usr/bin:/bin"))
    assert run.returncode == 2
    assert (f"could not verify train.py: torch is not installed in {tool / 'bin' / 'python3'} (from python3 on PATH)"
            in run.stderr)


def test_a_missing_interpreter_is_a_usage_error(venvs, tmp_path):
    tool, _ = venvs
    write(tmp_path / "train.py", SCRIPT)
    run = gradguard(tool, "verify", "--python", str(tmp_path / "nope" / "python"), "train.py", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == f"gradguard: --python {tmp_path / 'nope' / 'python'}: no such interpreter\n"


def test_the_wheel_and_sdist_pass_twine_check_and_build_without_deprecation_warnings():
    made_by("make packaging", DIST / ".stamp")
    files = sorted(map(str, [*DIST.glob("*.whl"), *DIST.glob("*.tar.gz")]))
    assert len(files) == 2
    twine = Path(sys.executable).with_name("twine")
    check = subprocess.run([str(twine), "check", "--strict", *files], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "NO_COLOR": "1"})
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("PASSED") == 2
    log = (DIST / "build.log").read_text()
    assert "Deprecat" not in log and "Successfully built" in log


def _torch_files(site: Path) -> dict[str, tuple[int, int, int]]:
    """Every file of torch and its dist-info: (size, modification time, inode)."""
    found = {}
    for top in [site / "torch", *site.glob("torch-*.dist-info")]:
        for path in top.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                stat = path.stat()
                found[str(path.relative_to(site))] = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
    return found


@pytest.mark.xdist_group("heavy")
def test_the_wheel_installs_beside_torch_2_13_without_changing_it(tmp_path):
    built = wheel()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "torch==2.13.0"], check=True, capture_output=True, timeout=600)
    version = [str(venv / "bin" / "python"), "-c", "import torch; print(torch.__version__)"]
    before = subprocess.run(version, capture_output=True, text=True, check=True).stdout
    [site] = (venv / "lib").glob("python3*/site-packages")
    files = _torch_files(site)
    install = subprocess.run([*pip, f"{built}[verify]"], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr
    assert subprocess.run(version, capture_output=True, text=True, check=True).stdout == before == "2.13.0+cpu\n"
    assert _torch_files(site) == files
    write(tmp_path / "train.py", SCRIPT)
    run = subprocess.run([str(venv / "bin" / "gradguard"), "verify", "--device", "cpu", "train.py"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=_bare_env())
    assert run.returncode == 1 and "Confirmed by running it on cpu." in run.stdout, run.stderr
    assert "gradguard: torch" not in run.stderr  # 2.13 is the op table's torch: no warning


def test_the_classifiers_name_each_python_gradguard_runs_on():
    """From `requires-python`'s 3.10 to 3.13 without a gap, the Python running these tests among them."""
    import re

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    versions = [c.rsplit(" :: ", 1)[1] for c in project["classifiers"]
                if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert (project["requires-python"], versions) == (">=3.10", ["3.10", "3.11", "3.12", "3.13"])
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in versions
