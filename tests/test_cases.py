"""gradguard's own labelled cases, in the shared corpus's format: tests/cases/ (one construct
each) and tests/programs/ (realistic programs: several classes, plain functions, containers,
trainer and agent classes, a training loop, the construct inside ordinary code).

Each case is a small program ending with a backward pass; `# expect: GGnnn` marks the offending
line. The labels come from running the cases with torch (label.py), never from reasoning, and
gradguard must report exactly the marked (line, code) pairs in every case.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import GRADGUARD, ROOT, markers

FOLDERS = ("cases", "programs")

# Case files the analyzer gets wrong today: file name -> what it misses or reports wrongly.
# Each becomes a strict xfail, so the suite flips (XPASS -> failure) once the analyzer is fixed:
# then delete the entry.
KNOWN_GAPS: dict[str, str] = {}

CASE_FILES = {folder: sorted(p.name for p in (ROOT / "tests" / folder).glob("*.py")) for folder in FOLDERS}


@pytest.mark.parametrize("folder", FOLDERS)
def test_labels_agree_with_torch(folder, corpus):
    """label.py runs every case with torch: raising cases raise the marked family's error, `_ok` run clean."""
    proc = subprocess.run([sys.executable, str(corpus / "label.py"), str(ROOT / "tests" / folder),
                           "--python", sys.executable], capture_output=True, text=True, timeout=1200, cwd=ROOT)
    lines = proc.stdout.strip().splitlines()
    failures = [line for line in lines if line.startswith("FAIL")]
    assert proc.returncode == 0, "label.py disagrees with torch:\n" + "\n".join(failures) + proc.stderr[-2000:]
    assert lines[-1] == f"{len(CASE_FILES[folder])} passed, 0 failed", proc.stdout[-2000:]


@pytest.mark.parametrize("folder, minimum", [("cases", 12), ("programs", 40)])
def test_case_set_is_well_formed(folder, minimum):
    assert len(CASE_FILES[folder]) >= minimum
    for name in CASE_FILES[folder]:
        path = ROOT / "tests" / folder / name
        marks = markers(path)
        assert name.endswith("_ok.py") == (not marks), f"{name}: `_ok` cases and only they have no marker"
        text = path.read_text()
        assert text.startswith('"""'), f"{name}: start with a docstring saying what the case shows"
        assert ".backward(" in text, f"{name}: a case ends with a backward pass"
    assert set(KNOWN_GAPS) <= {n for names in CASE_FILES.values() for n in names}, \
        "KNOWN_GAPS names a case that does not exist"


@pytest.fixture(scope="session")
def reported() -> dict[tuple[str, str], set[tuple[int, str]]]:
    """One `gradguard check --format json --no-config` run over both folders: (folder, file name) -> {(line, code)}."""
    folders = [ROOT / "tests" / folder for folder in FOLDERS]
    proc = subprocess.run([str(GRADGUARD), "check", "--format", "json", "--no-config", *map(str, folders)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    found: dict[tuple[str, str], set[tuple[int, str]]] = {}
    for diagnostic in json.loads(proc.stdout):
        if diagnostic["severity"] not in ("error", "warning"):
            continue
        path = Path(diagnostic["filename"])
        assert path.is_absolute() and path.parent in folders, diagnostic["filename"]
        found.setdefault((path.parent.name, path.name), set()).add((diagnostic["location"]["row"], diagnostic["code"]))
    return found


@pytest.mark.parametrize("folder, name", [
    pytest.param(folder, name, marks=pytest.mark.xfail(strict=True, reason=f"analyzer gap: {KNOWN_GAPS[name]}"))
    if name in KNOWN_GAPS else (folder, name)
    for folder in FOLDERS for name in CASE_FILES[folder]
])
def test_gradguard_reports_exactly_the_markers(folder, name, reported):
    want = markers(ROOT / "tests" / folder / name)
    got = reported.get((folder, name), set())
    assert got == want, f"missed {sorted(want - got)}, false alarms {sorted(got - want)}"


@pytest.mark.xfail(bool(KNOWN_GAPS), strict=True, reason=f"analyzer gaps: {', '.join(sorted(KNOWN_GAPS))}")
@pytest.mark.parametrize("folder", FOLDERS)
def test_score_is_perfect(folder, corpus):
    proc = subprocess.run(
        [sys.executable, str(corpus / "score.py"), str(ROOT / "tests" / folder),
         "--cmd", f"{shlex.quote(str(GRADGUARD))} check --format json --no-config"],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    assert re.search(r"^recall 1\.000 \(\d+/\d+\)  precision 1\.000 \(\d+/\d+\)  false alarms 0$", report,
                     re.MULTILINE), report
    assert report.strip().splitlines()[-1] == f"{len(CASE_FILES[folder])} passed, 0 failed", report
