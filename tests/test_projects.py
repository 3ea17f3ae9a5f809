"""Cases that span several files of a project: the analysis follows imports between them.

Each folder under tests/projects/ is a small project whose top-level scripts run a real backward
pass; `label.py` proves their `# expect:` markers with torch, `score.py` scores the CLI on the
whole folder (package files included: they must get no findings of their own).
"""

import json
import subprocess
import sys

import pytest

from helpers import GRADGUARD, ROOT, run, write

PROJECTS = sorted(p for p in (ROOT / "tests" / "projects").iterdir() if p.is_dir())


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_labels_hold_when_run_with_torch(project, corpus):
    result = subprocess.run([sys.executable, str(corpus / "label.py"), str(project)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip().splitlines()[-1].endswith("0 failed")


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_analyzer_finds_exactly_the_markers(project, corpus):
    result = subprocess.run([sys.executable, str(corpus / "score.py"), str(project),
                             "--cmd", f"{GRADGUARD} check --format json --no-config"],
                            capture_output=True, text=True, timeout=300)
    assert "recall 1.000" in result.stdout and "precision 1.000" in result.stdout, result.stdout
    assert " 0 failed" in result.stdout, result.stdout


GATE_FACTORY = """import torch.nn as nn


def build_gate(width):
    return nn.Sequential(nn.Linear(8, width), nn.Sigmoid())
"""
GATE_TRAINING = """import json

import torch

from layers import build_gate


def gate_for(config_text, export_only):
    width = json.loads(config_text)
    if export_only:
        return build_gate(width)
    gate = build_gate(width)
    x = torch.randn(4, 8, requires_grad=True)
    h = gate(x)
    h.mul_(2)
    h.sum().backward()
    return gate
"""


def test_a_factory_call_returned_at_once_does_not_hide_a_later_call_of_it(tmp_path):
    """`return build_gate(width)` in one branch is not followed (its result goes straight to the
    caller, nothing saved yet); the call after it, with the same unknown argument, still is."""
    write(tmp_path / "layers.py", GATE_FACTORY)
    write(tmp_path / "train.py", GATE_TRAINING)
    ran = subprocess.run([sys.executable, "-c", "from train import gate_for; gate_for('8', export_only=False)"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "modified by an inplace operation" in ran.stderr
    found = json.loads(run("check", "--format", "json", "--no-config", "--no-cache", "train.py", cwd=tmp_path).stdout)
    assert [(f["code"], f["location"]["row"]) for f in found] == [("GG001", 15)]
