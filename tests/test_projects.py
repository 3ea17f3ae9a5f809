"""Cases that span several files of a project: the analysis follows imports between them.

Each folder under tests/projects/ is a small project whose top-level scripts run a real backward
pass; `label.py` proves their `# expect:` markers with torch, `score.py` scores the CLI on the
whole folder (package files included: they must get no findings of their own).
"""

import subprocess
import sys

import pytest

from helpers import GRADGUARD, ROOT

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
