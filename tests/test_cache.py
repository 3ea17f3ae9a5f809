"""The result cache and parallel scans: what a second run reuses, and what makes it analyse again."""

import json
import shutil
import subprocess
from pathlib import Path

from helpers import GRADGUARD, ROOT

PROJECT = ROOT / "tests" / "projects" / "imported_gate"


def check(cwd: Path, *args: str) -> list[tuple[str, int, str]]:
    proc = subprocess.run([str(GRADGUARD), "check", "--format", "json", "--no-config", *args, "."],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return sorted((Path(d["filename"]).name, d["location"]["row"], d["code"]) for d in json.loads(proc.stdout))


def test_a_second_run_reads_the_cache_and_reports_the_same(tmp_path):
    shutil.copytree(PROJECT, tmp_path / "p")
    first = check(tmp_path / "p")
    assert first == [("train.py", 16, "GG001")]
    entries = list((tmp_path / "p" / ".gradguard_cache").glob("*.json"))
    assert len(entries) == 2, "one entry per analysed file (train.py and pkg/blocks.py)"
    assert check(tmp_path / "p") == first


def test_a_cached_finding_names_its_files_as_the_later_run_spells_them(tmp_path):
    """The cache is the project's, shared by runs from anywhere in it: a finding kept by a run from
    `pkg/` (`check ../train.py`) comes back in a run from the root (`check train.py`) naming the same
    files, not `../train.py` read from the root."""
    shutil.copytree(PROJECT, tmp_path / "p")
    (tmp_path / "p" / "pyproject.toml").write_text("[project]\nname = 'p'\n")

    def run(cwd: Path, path: str) -> list[dict]:
        proc = subprocess.run([str(GRADGUARD), "check", "--format", "json", "--no-config", path],
                              cwd=cwd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 1, proc.stderr
        return json.loads(proc.stdout)

    train, blocks = tmp_path / "p" / "train.py", tmp_path / "p" / "pkg" / "blocks.py"
    assert [d["filename"] for d in run(tmp_path / "p" / "pkg", "../train.py")] == [str(train)]
    assert len(list((tmp_path / "p" / ".gradguard_cache").glob("*.json"))) == 1
    found = run(tmp_path / "p", "train.py")  # a cache hit: the JSON names each file by its absolute path
    assert [(d["filename"], d["location"]["row"], d["code"]) for d in found] == [(str(train), 16, "GG001")]
    assert {r["filename"] for d in found for r in d["related"]} == {str(train), str(blocks)}, found


def test_changing_an_imported_file_invalidates_its_importers(tmp_path):
    shutil.copytree(PROJECT, tmp_path / "p")
    blocks = tmp_path / "p" / "pkg" / "blocks.py"
    assert check(tmp_path / "p") == [("train.py", 16, "GG001")]
    blocks.write_text(blocks.read_text().replace("torch.sigmoid(self.fc(x))", "self.fc(x)"))
    assert check(tmp_path / "p") == [], "Linear saves no output: the cached finding must not come back"


def test_no_cache_writes_nothing(tmp_path):
    shutil.copytree(PROJECT, tmp_path / "p")
    assert check(tmp_path / "p", "--no-cache") == [("train.py", 16, "GG001")]
    assert not (tmp_path / "p" / ".gradguard_cache").exists()


def test_settings_are_part_of_the_key(tmp_path):
    shutil.copytree(PROJECT, tmp_path / "p")
    assert check(tmp_path / "p") == [("train.py", 16, "GG001")]
    assert check(tmp_path / "p", "--ignore", "GG001") == []
    assert check(tmp_path / "p") == [("train.py", 16, "GG001")]


def test_parallel_and_serial_scans_agree(tmp_path):
    cases = ROOT / "tests" / "cases"
    serial = check(cases, "--no-cache", "--jobs", "1")
    parallel = check(cases, "--no-cache", "--jobs", "2")
    assert len(serial) > 30
    assert parallel == serial


def test_a_run_the_cache_answers_imports_no_analysis(tmp_path):
    """Start-up: a cache hit prints the cached findings without importing libcst, jedi, the analysis,
    the engine or the notebook reader (0.1 s or more before the first line)."""
    shutil.copytree(PROJECT, tmp_path / "p")
    assert check(tmp_path / "p") == [("train.py", 16, "GG001")]
    probe = ("import sys; from gradguard.__main__ import main; code = main(['check', '--format', 'json', "
             "'--no-config', '.']); heavy = sorted(m for m in ('libcst', 'jedi', 'gradguard.analysis', "
             "'gradguard.engine', 'gradguard.source.notebook') if m in sys.modules); print(heavy, file=sys.stderr); "
             "sys.exit(code)")
    proc = subprocess.run([str(GRADGUARD.with_name("python")), "-c", probe], cwd=tmp_path / "p",
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr
