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

from gradguard.config import Settings
from gradguard.engine import analyse_document, project_index
from gradguard.fixes.edits import apply_edits
from gradguard.source.document import Document

from helpers import GRADGUARD, ROOT, assert_labels_agree, import_file, markers, run_compiled

FOLDERS = ("cases", "programs")

# Case files the analyzer gets wrong today: file name -> what it misses or reports wrongly.
# Each becomes a strict xfail, so the suite flips (XPASS -> failure) once the analyzer is fixed:
# then delete the entry.
KNOWN_GAPS: dict[str, str] = {}

CASE_FILES = {folder: sorted(p.name for p in (ROOT / "tests" / folder).glob("*.py")) for folder in FOLDERS}


def compiles(path: Path) -> bool:
    """Whether the program compiles code with `torch.compile` (run apart: `test_compiled_labels_agree_with_torch`)."""
    return COMPILING.search(path.read_text(encoding="utf-8")) is not None


COMPILING = re.compile(r"torch\.compile\b|\.compile\(|torch\._dynamo\.optimize")
COMPILED_FILES = sorted(ROOT / "tests" / folder / name for folder in FOLDERS for name in CASE_FILES[folder]
                        if compiles(ROOT / "tests" / folder / name))


@pytest.mark.parametrize("folder", FOLDERS)
def test_labels_agree_with_torch(folder, corpus, tmp_path):
    """Every case fares with torch as its markers say (`helpers.assert_labels_agree`: raising cases raise the
    marked family's error, `_ok` ones run clean). The programs that compile code run apart, in one process
    (`test_compiled_labels_...`)."""
    assert_labels_agree([ROOT / "tests" / folder / name for name in CASE_FILES[folder]
                         if ROOT / "tests" / folder / name not in COMPILED_FILES], corpus, tmp_path)


def _agrees(error: str | None, code: str | None, families: dict[str, tuple[str, ...]]) -> bool:
    """As label.py judges: a raising family's marker raises its RuntimeError, any other program runs to its end
    (a silent one asserting its wrong gradient itself)."""
    if code not in families:
        return error is None
    return error is not None and error.startswith("RuntimeError") and any(m in error for m in families[code])


def test_compiled_labels_agree_with_torch(corpus):
    """The programs that compile code, run as written (inductor, one process), agree with their markers as
    label.py would judge them: a GG005 program runs to its end and asserts that its gradient is not eager's."""
    families = import_file(corpus / "label.py", "corpus_label").MESSAGES
    assert COMPILED_FILES, "no program compiles code"
    fates = run_compiled(COMPILED_FILES)
    for path in COMPILED_FILES:
        code = next((c for _, c in sorted(markers(path))), None)
        assert _agrees(fates[path.name], code, families), f"{path.name} ({code or 'clean'}): {fates[path.name]}"


def test_compiled_silent_programs_raise_in_eager_mode():
    """The same programs with `torch.compile` disabled: every GG005 change raises at backward as eager code
    does (so only compilation makes it silent); the others fare as compiled."""
    fates, compiled = run_compiled(COMPILED_FILES, "--eager"), 0
    for path in COMPILED_FILES:
        code = next((c for _, c in sorted(markers(path))), None)
        eager = "GG001" if code == "GG005" else code
        compiled += code == "GG005"
        assert _agrees(fates[path.name], eager, {"GG001": ("modified by an inplace operation",)}), \
            f"{path.name} ({code or 'clean'}), eager: {fates[path.name]}"
    assert compiled >= 3


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


def test_compiled_fixes_give_eager_gradients(tmp_path):
    """Each fix of each finding on the compiling programs, applied and run compiled: a GG005 program's own check
    that its gradient is not eager's now fails (`gradient unexpectedly right`), a raising one runs to its end;
    and gradguard reports nothing there."""
    project = project_index(use_jedi=False)
    fixed: dict[Path, str | None] = {}
    for path in COMPILED_FILES:
        text = path.read_text(encoding="utf-8")
        for finding in analyse_document(Document.parse(str(path), text), Settings(), project):
            for number, fix in enumerate(finding.fixes):
                target = tmp_path / f"{path.stem}_{finding.code}_fix{number}.py"
                target.write_text(apply_edits(text, list(fix.edits)), encoding="utf-8")
                fixed[target] = "AssertionError: gradient unexpectedly right" if finding.code == "GG005" else None
    assert sum(fate is not None for fate in fixed.values()) >= 3 and None in fixed.values()
    fates = run_compiled(list(fixed))
    for target, fate in fixed.items():
        assert fates[target.name] == fate, f"{target.name}: {fates[target.name]}"
        findings = analyse_document(Document.parse(str(target), target.read_text()), Settings(), project)
        assert not [f for f in findings if f.code not in ("GG000",)], target.name
