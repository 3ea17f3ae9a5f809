"""What the test modules share: paths, the `# expect:` marker, the missing-input policy (see
conftest.py), and the command-line helpers of test_cli.py and test_formats.py.

Imported as `from helpers import ...`: pytest's default import mode puts tests/ on sys.path.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"  # the labelled corpus, beside the repository
MODELS = ROOT / "third_party" / "models" / "src"  # made by `make models`
GRADGUARD = Path(sys.executable).with_name("gradguard")
MARK = re.compile(r"#\s*expect:\s*(GG\d{3})")
SHARED_MISSING = "../shared/corpus is not beside the repository"


def shared_corpus() -> Path:
    """CORPUS; skips the test when it is absent, or fails it under GRADGUARD_REQUIRE_SHARED=1."""
    if not CORPUS.is_dir():
        if os.environ.get("GRADGUARD_REQUIRE_SHARED") == "1":
            pytest.fail(f"{SHARED_MISSING} ({CORPUS}), and GRADGUARD_REQUIRE_SHARED=1 requires it", pytrace=False)
        pytest.skip(SHARED_MISSING)
    return CORPUS


def over_corpus(values: list) -> list:
    """Parameters read from the corpus; without it, one placeholder, which the test's `corpus` fixture
    skips (or fails), so that the reason shows instead of an empty parameter set."""
    return values if CORPUS.is_dir() else [pytest.param(None, id="no-shared-corpus")]


def made_by(command: str, *paths: Path) -> None:
    """Fails the test, naming `command` (a Makefile target), when any of `paths` is missing."""
    missing = [str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p) for p in paths if not p.exists()]
    if missing:
        pytest.fail(f"run `{command}` first (missing: {', '.join(missing)})", pytrace=False)


def markers(path: Path) -> set[tuple[int, str]]:
    """The (line, code) of each `# expect: GGnnn` marker in `path`, lines counted from 1."""
    return {(n, m.group(1)) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            for m in [MARK.search(line)] if m}


def import_file(path: Path, name: str) -> ModuleType:
    """The Python file `path` (a script, the corpus's label.py) imported as module `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(path: Path, text: str) -> Path:
    """`text` written to `path` (its folders made); returns `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    """The installed console script, as a user runs it."""
    return subprocess.run([str(GRADGUARD), *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd)


def run_forked(files: list[Path]) -> dict[str, str | None]:
    """tests/run_programs.py over `files`: each program in a process forked from one that imported torch, file
    name -> the exception it raised (`Type: first line`), None when it ran to its end."""
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "run_programs.py"), *map(str, files)],
                          capture_output=True, text=True, timeout=1800, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {Path(line["path"]).name: line["error"] for line in map(json.loads, proc.stdout.splitlines())}


def assert_labels_agree(paths: list[Path], corpus: Path, tmp_path: Path) -> None:
    """Each program fares with torch as label.py requires of its markers: one with a raising family's marker
    raises that family's error (its first), any other runs to its end. Each runs in a process forked from one
    that imported torch (`run_forked`); one that does not fare so is judged again by label.py itself, in a new
    process of its own, which decides."""
    label = import_file(corpus / "label.py", "corpus_label")
    fates = run_forked(paths)
    judged_again = [path for path in paths if not _fares_as_marked(fates[path.name], label.markers(path), label.MESSAGES)]
    if not judged_again:
        return
    for path in judged_again:
        (tmp_path / path.name).symlink_to(path)
    proc = subprocess.run([sys.executable, str(corpus / "label.py"), str(tmp_path), "--python", sys.executable],
                          capture_output=True, text=True, timeout=1200, cwd=ROOT)
    lines = proc.stdout.strip().splitlines()
    failures = [line for line in lines if line.startswith("FAIL")]
    assert proc.returncode == 0, "label.py disagrees with torch:\n" + "\n".join(failures) + proc.stderr[-2000:]
    assert lines[-1] == f"{len(judged_again)} passed, 0 failed", proc.stdout[-2000:]


def _fares_as_marked(error: str | None, marks: list[tuple[int, str]], families: dict[str, tuple[str, ...]]) -> bool:
    raising = [code for _, code in marks if code in families]
    if not raising:
        return error is None
    return error is not None and any(word in error for word in families[raising[0]])


def run_compiled(files: list[Path], *options: str) -> dict[str, str | None]:
    """tests/run_compiled_programs.py over `files` (programs using `torch.compile`), in one process: file name ->
    the exception it raised (`Type: first line`), None when it ran to its end. Skips without a C++ compiler."""
    if shutil.which("c++") is None and shutil.which("g++") is None:
        pytest.skip("no C++ compiler: inductor cannot compile")
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "run_compiled_programs.py"), *options,
                           *map(str, files)], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {Path(line["path"]).name: line["error"] for line in map(json.loads, proc.stdout.splitlines())}
