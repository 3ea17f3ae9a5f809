"""Reading the files a project imports: interrupted for a keystroke, nothing half-read is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradguard.analysis.project import ReadingInterrupted
from gradguard.engine import project_index
from gradguard.analysis.values import UNKNOWN


def _project(root: Path) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "layers.py").write_text("def gate(x):\n    return x.sigmoid()\n")
    (root / "pkg" / "heads.py").write_text("def head(x):\n    return x.relu()\n")
    (root / "pkg" / "model.py").write_text(
        "from pkg.layers import gate\nfrom pkg.heads import head\n"
        "first = gate(1)\nsecond = head(1)\n")
    return root / "pkg" / "model.py"


def test_an_interrupted_read_keeps_the_files_read_completely_and_reads_the_rest_later(tmp_path: Path) -> None:
    model = _project(tmp_path)
    index = project_index(use_jedi=False)
    asked: list[str] = []

    def interrupted() -> bool:  # model.py starts, layers.py is read whole, heads.py is refused
        asked.append("asked")
        return len(asked) == 3

    with index.interruptible(interrupted), pytest.raises(ReadingInterrupted):
        index.definitions_of(model)
    layers, heads = tmp_path / "pkg" / "layers.py", tmp_path / "pkg" / "heads.py"
    with index.without_reading() as not_read:
        assert index.definitions_of(layers) is not None  # read whole before the interruption: kept
        assert index.definitions_of(heads) is None
        assert index.definitions_of(model) is None  # half-read: not kept
    assert not_read == {heads, model}

    assert index.definitions_of(model) is not None  # no longer interruptible: read whole
    assert index.read_by(str(model)) == {str(layers), str(heads)}


def test_an_interruption_before_the_first_file_reads_nothing(tmp_path: Path) -> None:
    model = _project(tmp_path)
    index = project_index(use_jedi=False)
    with index.interruptible(lambda: True), pytest.raises(ReadingInterrupted):
        index.definitions_of(model)
    with index.without_reading() as not_read:
        assert index.definitions_of(model) is None
    assert not_read == {model}
    assert index.resolve(str(model), "pkg.heads.head") is not UNKNOWN
