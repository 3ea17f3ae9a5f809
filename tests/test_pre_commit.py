"""The pre-commit hooks as a team runs them: `pre-commit try-repo` of this clone (pre-commit installs
gradguard from it into a hook environment of its own, and activates that environment) on a project
that has its own `.venv`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT
from test_libraries import _project_with_venv

NOTEBOOK_CELLS = ["import torch", "x = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\ny += 1\n"
                  "y.sum().backward()"]


def _pre_commit() -> str:
    """The `pre-commit` program of gradguard's test extras."""
    beside = Path(sys.executable).with_name("pre-commit")
    found = str(beside) if beside.is_file() else shutil.which("pre-commit")
    if found is None:
        pytest.fail("pre-commit is not installed: pip install -e '.[test]'", pytrace=False)
    return found


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pre-commit's store (the hook environments it installs), shared by the session's tests."""
    return tmp_path_factory.mktemp("pre-commit-home")


def _notebook(cells: list[str]) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": str(n), "metadata": {}, "execution_count": None, "outputs": [],
         "source": source} for n, source in enumerate(cells)]})


def test_the_hook_reads_the_projects_venv_and_checks_notebooks(tmp_path, pre_commit_home):
    """pre-commit activates its hook environment (`VIRTUAL_ENV`); gradguard still reads the
    libraries of the project's `.venv` (here `fakezoo`, whose class hides the saved output of
    `train.py:9`), never running it, as `gradguard check` does; and the hook is given notebooks."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: pre-commit needs it")
    if subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=ROOT, capture_output=True).returncode:
        pytest.skip(f"{ROOT} is no git clone (an unpacked sdist): pre-commit try-repo needs one")
    project, _, ran = _project_with_venv(tmp_path)
    (project / ".gitignore").write_text(".venv/\n.gradguard_cache/\n")
    (project / "explore.ipynb").write_text(_notebook(NOTEBOOK_CELLS))
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "GRADGUARD_PYTHON",
                                                              "PYTHONPATH")}
    env.update(PRE_COMMIT_HOME=str(pre_commit_home), XDG_CACHE_HOME=str(tmp_path / "cache"))
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=env)
    subprocess.run(["git", "add", "."], cwd=project, check=True, env=env)

    proc = subprocess.run([_pre_commit(), "try-repo", str(ROOT), "gradguard", "--all-files"], cwd=project,
                          capture_output=True, text=True, timeout=600, env=env)

    reported = re.findall(r"^(\S.*?: GG\d{3}) ", proc.stdout, re.MULTILINE)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert reported == ["explore.ipynb:cell 2:3:1: GG001", "train.py:9:1: GG001"], \
        proc.stdout
    assert any(line.startswith("gradguard...") and line.endswith("Failed") for line in proc.stdout.splitlines())
    assert not ran.exists()
