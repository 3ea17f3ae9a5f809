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
    (root / "pkg" / "layers.py").write_text("class Gate:\n    pass\n\n\ndef gate(x):\n    return x.sigmoid()\n")
    (root / "pkg" / "heads.py").write_text("class Head:\n    pass\n\n\ndef head(x):\n    return x.relu()\n")
    (root / "pkg" / "model.py").write_text(  # its classes' bases are read with it
        "from pkg.layers import Gate\nfrom pkg.heads import Head\n"
        "class First(Gate):\n    pass\nclass Second(Head):\n    pass\n")
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


def test_a_finding_can_point_into_a_file_read_short(tmp_path: Path, monkeypatch) -> None:
    """The related location (where the tensor was saved) lies in a file whose read ran out of time:
    it is still placed, not an internal error."""
    from gradguard.analysis.budget import Budget
    from gradguard.config import Settings
    from gradguard.engine import analyse_document
    from gradguard.source.document import Document

    (tmp_path / "helper.py").write_text("def g(x):\n    return x.sigmoid()\n")
    train = tmp_path / "train.py"
    train.write_text("import torch\nfrom helper import g\nx = torch.ones(2, requires_grad=True)\n"
                     "y = g(x)\ny.mul_(2)\ny.sum().backward()\n")
    monkeypatch.setattr(Budget, "out_of_time", lambda self: True)  # every read ends as if it ran out of time
    [finding] = analyse_document(Document.parse(str(train), train.read_text()), Settings(), project_index(use_jedi=False))
    assert (finding.code, finding.span.start.line) == ("GG001", 5)
    assert [(Path(r.filename).name, r.span.start.line) for r in finding.related][:1] == [("helper.py", 2)]


def _imports_project(root: Path) -> list[Path]:
    """`train.py` imports four helper files of one size, and a bug sits behind the last."""
    padding = "".join(f"\nCONSTANT_{i} = {i}" for i in range(26))
    for name in ("alpha", "beta", "gamma"):
        (root / f"{name}.py").write_text(f"def {name}(x):\n    return x * 2\n{padding}\n")
    (root / "delta.py").write_text(f"def delta(x):\n    return x.sigmoid()\n{padding}\n")
    (root / "train.py").write_text(
        "import torch\nfrom alpha import alpha\nfrom beta import beta\nfrom gamma import gamma\nfrom delta import delta\n"
        "x = torch.ones(2, requires_grad=True)\ny = delta(gamma(beta(alpha(x))))\ny += 1\ny.sum().backward()\n")
    return [root / f"{name}.py" for name in ("alpha", "beta", "gamma", "delta")] + [root / "train.py"]


@pytest.mark.parametrize("allowance", [3, 4])
def test_the_imports_an_analysis_may_read_do_not_depend_on_what_was_read_before(
        tmp_path: Path, monkeypatch, allowance: int) -> None:
    """With room for `allowance` of its four imports' readings, `train.py` finds the same (the bug
    behind `delta.py`, or nothing) whether it is analysed first or after its imports were analysed
    themselves, in either order (the CLI's orders in one worker)."""
    from gradguard.analysis import budget
    from gradguard.config import Settings
    from gradguard.engine import analyse_document
    from gradguard.source.document import Document

    files = _imports_project(tmp_path)
    each = budget.READ_STEPS_PER_LINE * (files[0].read_text().count("\n") + 1)  # one import's reading
    monkeypatch.setattr(budget, "IMPORT_STEPS", allowance * each)
    train = files[-1]

    def found(index, order: list[Path]) -> list[tuple[str, int]]:
        for path in order:
            analyse_document(Document.parse(str(path), path.read_text()), Settings(), index)
        return [(f.code, f.span.start.line) for f in analyse_document(
            Document.parse(str(train), train.read_text()), Settings(), index)]

    first = found(project_index(use_jedi=False), [])
    assert first == ([("GG001", 8)] if allowance == 4 else [("GG000", 1)])  # the note: imports left unread
    assert found(project_index(use_jedi=False), files[:-1]) == first
    assert found(project_index(use_jedi=False), files[::-1][1:]) == first


def test_an_imported_file_is_read_once_whatever_the_analysis_reading_it_has_charged_before(
        tmp_path: Path, monkeypatch) -> None:
    """Reading `mid.py` needs `delta.py` and `alpha.py` (its classes' bases); `first.py` uses
    `big.py` before it, which leaves no room for all three. `mid.py`'s reading has an allowance of its own: it is read once, whole,
    refused to `first.py` (a note says so) and used by `second.py`, which finds the bug behind
    `delta.py` whether it is analysed before or after `first.py`."""
    from gradguard.analysis import budget
    from gradguard.analysis.interpreter import read_top_level
    from gradguard.analysis.project import ProjectIndex
    from gradguard.config import Settings
    from gradguard.engine import analyse_document
    from gradguard.source.document import Document

    def padded(code: str, lines: int) -> str:  # `code`, then constants up to `lines` lines
        return code + "".join(f"CONSTANT_{i} = {i}\n" for i in range(lines - code.count("\n")))

    module = "import torch\n\n\nclass {}(torch.nn.Module):\n    def forward(self, x):\n        return {}\n"
    (tmp_path / "alpha.py").write_text(padded(module.format("Double", "x * 2"), 30))
    (tmp_path / "delta.py").write_text(padded(module.format("Gate", "x.sigmoid()"), 30))
    (tmp_path / "mid.py").write_text(padded(  # its classes' bases are read with it
        "from alpha import Double\nfrom delta import Gate\n\n\nclass Chain(Gate):\n    pass\n\n\n"
        "class Twice(Double):\n    pass\n", 30))
    (tmp_path / "big.py").write_text(padded(module.format("Big", "x"), 60))
    bug = "x = torch.ones(2, requires_grad=True)\ny = Chain()(x)\ny += 1\ny.sum().backward()\n"
    (tmp_path / "first.py").write_text(f"import torch\nfrom big import Big\nfrom mid import Chain\n\n\nclass Local(Big):\n    pass\n\n\n{bug}")
    (tmp_path / "second.py").write_text(f"import torch\nfrom mid import Chain\n{bug}")
    each = budget.READ_STEPS_PER_LINE * (30 + 1)  # a reading's steps: its lines, and the empty one after the last
    monkeypatch.setattr(budget, "IMPORT_STEPS", 3 * each)  # mid.py with what it needs, not big.py besides
    read: list[str] = []

    def counted(module, path, project, text=None):
        read.append(Path(path).name)
        return read_top_level(module, path, project, text)

    def found(index: ProjectIndex, name: str) -> list[tuple[str, int, str]]:
        path = tmp_path / name
        return [(f.code, f.span.start.line, f.message) for f in
                analyse_document(Document.parse(str(path), path.read_text()), Settings(), index)]

    alone = found(ProjectIndex(counted, use_jedi=False), "second.py")
    assert [(code, line) for code, line, _ in alone] == [("GG001", 5)]
    index = ProjectIndex(counted, use_jedi=False)
    read.clear()
    [(code, line, note)] = found(index, "first.py")
    assert (code, line) == ("GG000", 1) and "`mid.py`" in note
    assert found(index, "second.py") == alone
    assert sorted(read) == ["alpha.py", "big.py", "delta.py", "mid.py"]


def test_what_a_refused_reading_needed_is_not_charged_to_the_reading_that_refused_it(
        tmp_path: Path, monkeypatch) -> None:
    """`f.py` needs `big.py` and `g.py`, which needs `h.py`; `f.py`'s allowance has room for `big.py`
    and not for `g.py` with `h.py`. Whether `g.py` was read before (by `useg.py`) or is read by
    `f.py`'s reading, `f.py` is charged what it used only, and `main.py` finds the bug behind it."""
    from gradguard.analysis import budget
    from gradguard.config import Settings
    from gradguard.engine import analyse_document
    from gradguard.source.document import Document

    def padded(code: str, lines: int) -> str:  # `code`, then constants up to `lines` lines
        return code + "".join(f"CONSTANT_{i} = {i}\n" for i in range(lines - code.count("\n")))

    module = "import torch\n\n\nclass {}(torch.nn.Module):\n    def forward(self, x):\n        return {}\n"
    (tmp_path / "h.py").write_text(padded(module.format("H", "x"), 30))
    (tmp_path / "g.py").write_text(padded("from h import H\n\n\nclass G(H):\n    pass\n", 30))
    (tmp_path / "big.py").write_text(padded(module.format("Big", "x"), 60))
    (tmp_path / "f.py").write_text(padded(
        "from big import Big\nfrom g import G\n\n\nclass Gate(Big):\n    def forward(self, x):\n"
        "        return x.sigmoid()\n\n\nclass Other(G):\n    pass\n", 14))
    (tmp_path / "main.py").write_text("import torch\nfrom f import Gate\nx = torch.ones(2, requires_grad=True)\n"
                                      "y = Gate()(x)\ny += 1\ny.sum().backward()\n")
    (tmp_path / "useg.py").write_text("from g import G\n\n\nclass U(G):\n    pass\n")
    monkeypatch.setattr(budget, "IMPORT_STEPS", 3 * budget.READ_STEPS_PER_LINE * 31)

    def found(index, name: str) -> list[tuple[str, int]]:
        path = tmp_path / name
        return [(f.code, f.span.start.line) for f in
                analyse_document(Document.parse(str(path), path.read_text()), Settings(), index)]

    alone = found(project_index(use_jedi=False), "main.py")
    assert alone == [("GG000", 1), ("GG001", 5)]  # the note: `g.py`, which `f.py` left unread
    index = project_index(use_jedi=False)
    found(index, "useg.py")
    assert found(index, "main.py") == alone


def test_an_editor_s_next_version_is_charged_what_its_module_level_read_as_a_run_from_the_top(
        tmp_path: Path, monkeypatch) -> None:
    """A version whose module level stands (only a function body changed) keeps what its imports
    cost: the note that `b.py` was left unread stays, and the files importing the document are
    charged its imports, as when it is analysed afresh."""
    import os

    from gradguard.analysis import budget
    from gradguard.config import Settings
    from gradguard.engine import OpenDocument, analyse_document
    from gradguard.source.document import Document

    module = "import torch\n\n\nclass {}(torch.nn.Module):\n    def forward(self, x):\n        return {}\n"
    (tmp_path / "a.py").write_text(module.format("A", "x") + "".join(f"A_{i} = {i}\n" for i in range(24)))
    (tmp_path / "b.py").write_text(module.format("B", "x.sigmoid()") + "".join(f"B_{i} = {i}\n" for i in range(24)))
    monkeypatch.setattr(budget, "IMPORT_STEPS", budget.READ_STEPS_PER_LINE * 31 + 10)  # room for a.py only
    first = ("import torch\nfrom a import A\nfrom b import B\n\n\nclass M(A):\n    pass\n\n\nclass N(B):\n    pass\n\n\n"
             "def f():\n    x = torch.ones(2, requires_grad=True)\n    y = N()(x)\n    y += 1\n"
             "    y.sum().backward()\n")
    path = str(tmp_path / "main.py")
    key = Path(os.path.realpath(path))

    def found(findings) -> list[tuple[str, int, str]]:
        return [(f.code, f.span.start.line, f.message) for f in findings]

    index = project_index(use_jedi=False)
    document = OpenDocument(path)
    assert [code for code, _, _ in found(document.analyse(first, Settings(), index))] == ["GG000"]
    cost = index._definitions[key].reading_cost
    assert sorted(Path(file).name for file in cost) == ["a.py", "main.py"]
    text = first.replace("    y += 1\n", "    y += 2\n")
    afresh = found(analyse_document(Document.parse(path, text), Settings(), project_index(use_jedi=False)))
    assert found(document.analyse(text, Settings(), index)) == afresh
    assert index._definitions[key].reading_cost == cost


def test_a_version_run_on_from_a_checkpoint_keeps_the_cost_of_the_imports_before_it(tmp_path: Path) -> None:
    """The files importing an open document are charged the imports its module level read, whether
    its last version ran from the top or on from a checkpoint taken after them."""
    import os

    from gradguard.config import Settings
    from gradguard.engine import OpenDocument

    (tmp_path / "a.py").write_text("import torch\n\n\nclass A(torch.nn.Module):\n    pass\n")
    first = ("import torch\nfrom a import A\n\n\nclass M(A):\n    pass\n\n\n"
             + "".join(f"v{i} = {i}\n" for i in range(40)) + "z = 1\n")
    path = str(tmp_path / "main.py")
    key = Path(os.path.realpath(path))
    index = project_index(use_jedi=False)
    document = OpenDocument(path)
    document.analyse(first, Settings(), index)
    cost = index._definitions[key].reading_cost
    assert sorted(Path(file).name for file in cost) == ["a.py", "main.py"]
    document.prepare(index)  # checkpoints for the next keystroke
    document.analyse(first.replace("z = 1\n", "z = 2\n"), Settings(), index)
    assert document._previous.checkpoints  # it ran on from one
    assert index._definitions[key].reading_cost == cost


def test_a_module_installed_nowhere_is_not_asked_of_jedi(tmp_path: Path, monkeypatch) -> None:
    """`deepspeed`, neither installed nor a folder of the project, stays unknown without a jedi
    query (each took milliseconds, the first a third of a second); a module of the project that
    the import paths cannot place is still asked. A file of the project named like the package
    (`onnx.py` beside `from onnx.checker import ...`) has no modules: not asked either."""
    from gradguard.analysis import jedi_lookup
    from gradguard.config import Settings
    from gradguard.engine import analyse_document
    from gradguard.source.document import Document

    asked: list[str] = []
    monkeypatch.setattr(jedi_lookup, "jedi_goto", lambda source, path, search_path: asked.append(source) or [])
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "vendored").mkdir()
    (tmp_path / "vendored" / "__init__.py").write_text("")
    train = tmp_path / "src" / "train.py"
    train.parent.mkdir()
    (tmp_path / "src" / "onnx.py").write_text("")  # a module of the project named like a package it imports
    train.write_text("import torch\nimport deepspeed\nimport vendored\nfrom onnx.checker import check_model\n"
                     "x = torch.ones(2, requires_grad=True)\n"
                     "y = deepspeed.zero.scale(x) + vendored.tools.shift(x) + check_model(x)\ny.sum().backward()\n")
    assert analyse_document(Document.parse(str(train), train.read_text()), Settings(), project_index()) == []
    assert asked == ["from vendored.tools import shift\n"]  # `onnx.checker`: no module of a file's



def test_an_editors_first_answer_reads_no_import_though_entry_points_are_judged_quiet(tmp_path: Path) -> None:
    """An editor's first analysis leaves the imported files unread (they are read in the background),
    also after an entry point was judged quiet, which reads nothing in a scope of its own."""
    from gradguard.config import Settings
    from gradguard.engine import analyse_document
    from gradguard.source.document import Document

    _project(tmp_path)
    train = tmp_path / "train.py"
    train.write_text("from pkg.layers import gate\nfrom pkg.heads import head\n\n\n"
                     "def describe(x):\n    return head(x)\n\n\n"
                     "def step(x):\n    y = gate(x)\n    y.mul_(2)\n    return y\n")
    index = project_index(use_jedi=False)
    with index.without_reading() as not_read:
        assert analyse_document(Document.parse(str(train), train.read_text()), Settings(), index) == []
        assert index.definitions_of(tmp_path / "pkg" / "layers.py") is None
    assert not_read == {tmp_path / "pkg" / "layers.py", tmp_path / "pkg" / "heads.py"}
