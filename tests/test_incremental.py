"""An open document re-parses only the blocks an edit touched and re-interprets only the functions
whose input changed: its findings must equal those of a full analysis of the same text."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gradguard.analysis.budget import Cancelled
from gradguard.config import Settings
from gradguard.engine import OpenDocument, analyse_document, project_index
from gradguard.source.document import Document
from gradguard.source.skeleton import LazyBlock
from gradguard.source.walk import descendants

from helpers import MODELS, ROOT, made_by

SNIPPETS = ["x.add_(1)\n", "y = x.sigmoid()\n", "x += 1\n", "y.mul_(2)\n", "# a comment\n", "\n", "pass\n",
            "return x\n", "x = torch.relu(x, inplace=True)\n"]


def shown(findings: list) -> list[tuple]:
    return [(f.code, f.span.start.line, f.span.start.column, f.span.end.line, f.span.end.column, f.message)
            for f in findings]


def edit(lines: list[str], rng: random.Random) -> None:
    """One random edit of the kind typing makes: a character, a line added or removed, a bracket lost."""
    i = rng.randrange(len(lines))
    line = lines[i]
    kind = rng.random()
    if kind < 0.4:
        column = rng.randrange(max(len(line) - 1, 1))
        lines[i] = line[:column] + rng.choice("abc_(). +=1:") + line[column:]
    elif kind < 0.65:
        indent = line[:len(line) - len(line.lstrip())]
        lines.insert(i, indent + rng.choice(SNIPPETS))
    elif kind < 0.85:
        del lines[i]
    else:
        lines[i] = line.replace("(", "", 1)


CASES = sorted((ROOT / "tests" / "cases").glob("*.py"))
PROGRAMS = sorted((ROOT / "tests" / "programs").glob("*.py"))  # trainers, classes, module-level loops
REAL = [MODELS / "timm" / "layers" / "mlp.py", MODELS / "torchvision" / "models" / "resnet.py",
        MODELS / "timm" / "models" / "vision_transformer.py"]


@pytest.mark.parametrize("path", [*CASES[::3], *PROGRAMS[::5], *REAL], ids=lambda p: p.name)
def test_random_edits_give_the_findings_of_a_full_analysis(path: Path) -> None:
    made_by("make models", path)
    rng = random.Random(path.name)
    lines = path.read_text().splitlines(keepends=True)
    project = project_index(use_jedi=False)
    opened = OpenDocument(str(path))
    opened.analyse("".join(lines), Settings(), project)
    compared = 0
    good = list(lines)
    for _ in range(12 if path in REAL else 25):
        if rng.random() < 0.5:
            lines = list(good)  # the user repairs what they broke
        edit(lines, rng)
        text = "".join(lines)
        incremental = opened.analyse(text, Settings(), project)
        full = Document.parse(str(path), text)
        if full.module is None:  # a syntax error: reported where CPython places it
            assert [f.span.start for f in incremental if f.code == "GG000"] == [full.syntax_problem.position]
            continue
        good = list(lines)
        assert shown(incremental) == shown(analyse_document(full, Settings(), project))
        compared += 1
    assert compared


TWO_FUNCTIONS = '''import torch


def first():
    w = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(w)
    y.mul_(2)
    y.sum().backward()


def second():
    w = torch.randn(3, requires_grad=True)
    z = torch.tanh(w)
    z.add_(1)
    z.sum().backward()
'''


def test_a_block_that_stops_parsing_gets_one_syntax_error_and_the_others_keep_their_findings() -> None:
    opened = OpenDocument("two.py")
    project = project_index(use_jedi=False)
    assert [(f.code, f.span.start.line) for f in opened.analyse(TWO_FUNCTIONS, Settings(), project)] == [
        ("GG001", 7), ("GG001", 14)]
    broken = TWO_FUNCTIONS.replace("z = torch.tanh(w)", "z = torch.tanh(w")
    found = opened.analyse(broken, Settings(), project)
    assert [(f.code, f.span.start.line) for f in found] == [("GG001", 7), ("GG000", 13)]
    assert found[1].message == ("'(' was never closed: gradguard skips lines 9–15 until they parse; "
                                "the rest of the file is analysed")
    above = broken.replace("def first():\n", "def first():\n    pass\n")  # the lines below move down
    assert [(f.code, f.span.start.line) for f in opened.analyse(above, Settings(), project)] == [
        ("GG001", 8), ("GG000", 14)]
    repaired = above.replace("z = torch.tanh(w", "z = torch.tanh(w)")
    assert [(f.code, f.span.start.line) for f in opened.analyse(repaired, Settings(), project)] == [
        ("GG001", 8), ("GG001", 15)]


def test_lines_left_blank_by_a_deleted_statement_are_parsed_when_typed_in_again() -> None:
    """Deleting the last statement leaves blank lines: the block above owns them, so a half-typed
    line there later is found (it was in no block: nothing parsed it, no syntax error was shown)."""
    opened = OpenDocument("blank.py")
    project = project_index(use_jedi=False)
    found = [[(f.code, f.span.start.line) for f in opened.analyse(text, Settings(), project)]
             for text in ["a = 1\nb = 2\n\nc = 3\n\n", "a = 1\nb = 2\n\n\n\n", "a = 1\nb = 2\nc.b(\n\n\n"]]
    assert found == [[], [], [("GG000", 3)]]
    assert opened.analyse("a = 1\nb = 2\nc = (1,\n\n\n", Settings(), project)[0].message.startswith(
        "'(' was never closed")


def test_typing_in_a_method_reparses_only_that_method() -> None:
    path = MODELS / "timm" / "models" / "vision_transformer.py"
    made_by("make models", path)
    text = path.read_text()
    opened = OpenDocument(str(path))
    opened.analyse(text, Settings(), project_index(use_jedi=False))
    body = text.index("        x = self.patch_embed(x)\n")
    typed = text[:body] + "        y = x.sigmoid()\n" + text[body:]
    opened.blocks.update(typed)
    assert [type(n).__name__ for n in opened.blocks.replaced] == ["FunctionDef"]
    assert opened.blocks.replaced[0].name.value == "forward_intermediates"


def test_syntax_newer_than_the_servers_python_is_analysed_whole_version_after_version() -> None:
    """`def f[T]` (Python 3.12) parses with libcst; when CPython's own parser refuses it, the
    document is not split into blocks: every version is parsed whole, positions still exact."""
    text = TWO_FUNCTIONS.replace("def second():", "def second[T]():")
    opened = OpenDocument("generic.py")
    project = project_index(use_jedi=False)
    assert shown(opened.analyse(text, Settings(), project)) == shown(
        analyse_document(Document.parse("generic.py", text), Settings(), project))
    assert [(f.code, f.span.start.line) for f in opened.analyse(text, Settings(), project)] == [
        ("GG001", 7), ("GG001", 14)]
    moved = text.replace("def first():\n", "def first():\n    pass\n")
    assert [(f.code, f.span.start.line, f.span.start.column) for f in opened.analyse(moved, Settings(), project)] == [
        ("GG001", 8, 4), ("GG001", 15, 4)]


def test_a_file_open_before_is_not_parsed_again_when_opened_and_an_imported_skeleton_is(tmp_path: Path) -> None:
    layers = tmp_path / "layers.py"
    layers.write_text(TWO_FUNCTIONS)
    project = project_index(use_jedi=False)
    read = project.definitions_of(layers)  # imported by a document open before: a skeleton (`source/skeleton.py`)
    assert read is not None
    opened = OpenDocument(str(layers))
    assert [(f.code, f.span.start.line) for f in opened.analyse(TWO_FUNCTIONS, Settings(), project)] == [
        ("GG001", 7), ("GG001", 14)]
    assert opened.blocks.module is not read.module and opened.blocks.module.code == TWO_FUNCTIONS
    assert not any(isinstance(n, LazyBlock) for n in descendants(opened.blocks.module))  # a document's tree is whole
    reopened = OpenDocument(str(layers))  # closed and opened again, unchanged
    assert shown(reopened.analyse(TWO_FUNCTIONS, Settings(), project)) == shown(
        opened.analyse(TWO_FUNCTIONS, Settings(), project))
    assert reopened.blocks.module is opened.blocks.module
    changed = TWO_FUNCTIONS.replace("y.mul_(2)", "y = y * 2")
    assert [(f.code, f.span.start.line) for f in OpenDocument(str(layers)).analyse(changed, Settings(), project)] == [
        ("GG001", 14)]


GLOBAL_FLAG = '''import torch
import torch.nn as nn

INPLACE = False


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=INPLACE)

    def forward(self, x):
        h = torch.sigmoid(x)
        return self.act(h)


def scale(t, factor=2.0):
    return t * factor


def step():
    head(x).sum().backward()


head = Head()
x = torch.randn(3, requires_grad=True)
'''


def test_an_edit_of_module_level_code_reinterprets_the_functions_whose_globals_changed() -> None:
    """A method whose class reads a global the edit rebinds is analysed again (its finding comes
    and goes with the global); one reading only what is bound as before keeps its result, and one
    reading what the module-level code builds (a model, a tensor) is analysed again."""
    opened = OpenDocument("head.py")
    project = project_index(use_jedi=False)
    assert opened.analyse(GLOBAL_FLAG, Settings(), project) == []
    flagged = GLOBAL_FLAG.replace("INPLACE = False", "INPLACE = True")
    found = opened.analyse(flagged, Settings(), project)
    assert [(f.code, f.span.start.line) for f in found] == [("GG001", 14)]
    assert shown(found) == shown(analyse_document(Document.parse("head.py", flagged), Settings(), project))
    units = dict(opened._previous.units)
    typed = flagged + "y = scale(head(x))\ny.sum().backward()\n"
    assert [(f.code, f.span.start.line) for f in opened.analyse(typed, Settings(), project)] == [("GG001", 14)]
    assert {function.name.value for function in units} == {"forward", "scale", "step"}
    kept = {function.name.value for function, unit in opened._previous.units.items() if units.get(function) is unit}
    assert kept == {"forward", "scale"}  # not `step`: it reads `head` and `x`, built again
    assert opened.analyse(GLOBAL_FLAG, Settings(), project) == []


ENTRY_POINT_STEP = """import torch
import torch.nn as nn

policy = nn.Linear(4, 2)
optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)


def bonus_step(obs):
    bonus = policy(obs).sigmoid().mean()
    optimizer.zero_grad()
    bonus.backward(retain_graph=True)
    optimizer.step()


logits = policy(torch.randn(3, 4)).sigmoid()
logits.sum().backward()
"""


def test_a_function_edited_below_module_level_saves_keeps_its_saves_apart_from_theirs() -> None:
    """Typing in a function whose graph dies when it returns keeps it clean: its saves, analysed
    again beside the module level's kept result, take serials after the module level's (a global's
    history, `logits` here, holds those), so none is taken for one a global can still reach."""
    opened = OpenDocument("rl.py")
    project = project_index(use_jedi=False)
    assert opened.analyse(ENTRY_POINT_STEP, Settings(), project) == []
    typed = ENTRY_POINT_STEP.replace("    optimizer.zero_grad()\n", "    optimizer.zero_grad()\n    obs = obs * 2\n")
    assert opened._previous is not None
    assert opened.analyse(typed, Settings(), project) == []
    assert shown(analyse_document(Document.parse("rl.py", typed), Settings(), project)) == []


def test_typing_below_the_module_level_code_runs_it_from_the_statement_typed_in() -> None:
    """Each version starts from the state the module level had before the first top-level
    statement the previous version did not have (`checkpoint.py`); a change that waited there
    for a backward pass is confirmed by the backward typed below it, and waits again once the
    backward is deleted."""
    opened = OpenDocument("head.py")
    project = project_index(use_jedi=False)
    base = GLOBAL_FLAG + "h = torch.sigmoid(x)\nh.mul_(2)\n"
    versions = [base, base + "loss = h.sum()\n", base + "loss = h.sum()\nloss.backward()\n",
                base + "loss = h.sum()\nloss.backward(retain_graph=True)\n", base + "loss = h.sum()\n"]
    found, checkpoints = [], []
    for text in versions:
        findings = opened.analyse(text, Settings(), project)
        assert shown(findings) == shown(analyse_document(Document.parse("head.py", text), Settings(), project))
        found.append([(f.code, f.span.start.line, [r.span.start.line for r in f.related]) for f in findings])
        checkpoints.append([len(c.prefix) for c in opened._previous.checkpoints])
    assert found == [[], [], [("GG001", 28, [27, 30])], [("GG001", 28, [27, 30])], []]
    # a line added re-parses the statement above it too: before `h.mul_(2)`, `loss = …`; a line edited
    # re-parses only itself: before `loss.backward(…)`
    assert checkpoints == [[], [9], [9, 10], [9, 10, 11], [9, 10]]


def test_a_factory_reparsed_beside_a_new_statement_is_followed_again_by_the_class_that_calls_it() -> None:
    """A class's `__init__` builds its layers through a top-level factory: when an edit re-parses
    the factory and adds a statement (the module level runs again), the methods analysed with the
    modules it built are analysed again, with the new factory's layers."""
    path = ROOT / "tests" / "programs" / "dqn_hard_target_copy_before_backward.py"
    text = path.read_text().replace("agent.update(*batch)", "")  # `update` analysed on its own
    opened = OpenDocument(str(path))
    project = project_index(use_jedi=False)
    opened.analyse(text, Settings(), project)
    edited = text.replace("\ndef q_network(", "\npass\ndef q_network(")
    found = opened.analyse(edited, Settings(), project)
    assert shown(found) == shown(analyse_document(Document.parse(str(path), edited), Settings(), project))
    assert [(f.code, f.span.start.line) for f in found] == [("GG001", 23)]


def test_deleting_the_only_line_that_did_not_parse_clears_its_syntax_error() -> None:
    opened = OpenDocument("cell.py")
    project = project_index(use_jedi=False)
    assert opened.analyse("x = 1\n# a comment\n", Settings(), project) == []
    assert [(f.code, f.span.start.line) for f in opened.analyse("raeturn x\n# a comment\n", Settings(), project)] == [
        ("GG000", 1)]
    assert opened.analyse("# a comment\n", Settings(), project) == []


def _equal_version_after_version(*texts: str) -> list[list[tuple[str, int]]]:
    """Each text analysed after the one before it in one open document: its findings, asserted
    equal to a full analysis of the same text."""
    opened = OpenDocument("edited.py")
    project = project_index(use_jedi=False)
    found = []
    for text in texts:
        findings = opened.analyse(text, Settings(), project)
        assert shown(findings) == shown(analyse_document(Document.parse("edited.py", text), Settings(), project))
        found.append([(f.code, f.span.start.line) for f in findings])
    return found


CLASS_AT_ITS_TIME = '''import torch
INPLACE = {}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = torch.nn.ReLU(inplace=INPLACE)

    def forward(self, x):
        y = torch.sigmoid(x)
        return self.act(y)


INPLACE = False
'''


def test_a_class_built_with_a_global_as_it_was_then_is_analysed_again_when_that_changes() -> None:
    """`__init__` runs where the class is defined: it reads `INPLACE` as bound there, not as the
    module level leaves it (the same at the end in both versions)."""
    inplace, not_inplace = CLASS_AT_ITS_TIME.format("True"), CLASS_AT_ITS_TIME.format("False")
    assert _equal_version_after_version(inplace, not_inplace, inplace) == [[("GG001", 12)], [], [("GG001", 12)]]


def test_a_class_defined_inside_a_function_stays_known_after_an_edit_elsewhere() -> None:
    program = '''import torch
import torch.nn as nn


class Base(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x)


def build():
    class Inner(Base):
        def forward(self, x):
            x.requires_grad_()
            y = super().forward(x)
            y.mul_(2)
            return y
    return Inner()


LR = {}
'''
    assert _equal_version_after_version(program.format("0.1"), program.format("0.2")) == [[("GG001", 15)]] * 2


def test_a_flag_a_function_changed_in_a_module_level_model_is_not_seen_by_the_next_version() -> None:
    """`freeze()` turns the weight's requires_grad off in the module's model: after an edit of
    `train`, the model is built again, as a full analysis builds it, before `train` runs."""
    program = '''import torch
import torch.nn as nn

model = nn.Linear(3, 3)


def train(x):
    model.weight.mul_({})
    return model.weight


def freeze():
    model.weight.requires_grad_(False)
'''
    assert _equal_version_after_version(program.format(2), program.format(3)) == [[("GG002", 8)]] * 2


CLASS_SHARING_PARTS = '''import torch
import torch.nn as nn


class Part:
    def __init__(self):
        self.act = nn.ReLU()


class A:
    def __init__(self):
        self.parts = (Part(),)

    @classmethod
    def run(cls, w):
        y = torch.sigmoid(w)
        return cls.parts[0].act(y)

    @classmethod
    def make_inplace(cls):
        cls.parts[0].act = nn.ReLU(inplace=True)


w = torch.randn(3, requires_grad=True)
x = 1
A.run(w).sum().backward()
A.make_inplace()
'''


def test_a_class_whose_methods_change_what_its_template_holds_starts_each_version_as_it_was_built() -> None:
    """A classmethod changes a module in a tuple its class's `__init__` built, after the backward:
    the next versions' checkpoints hold that class as its statement built it (a template that a
    copy of it could change is copied, not shared), so `A.run` never sees the in-place ReLU."""
    opened = OpenDocument("parts.py")
    project = project_index(use_jedi=False)
    for value in ("1", "12", "123"):
        text = CLASS_SHARING_PARTS.replace("x = 1\n", f"x = {value}\n")
        assert opened.analyse(text, Settings(), project) == []
    assert analyse_document(Document.parse("parts.py", text), Settings(), project) == []


def test_a_stopped_run_that_kept_the_module_level_leaves_the_next_version_its_own_functions() -> None:
    """Only a function body changed (the module level's result stands) and that run is stopped:
    the next version follows its own body of the function, not the stopped version's."""
    heavy = "def h():\n" + "".join(f"    a{i} = torch.randn(3) + {i}\n" for i in range(300))
    first = f"import torch\n\n\n{heavy}\n\ndef f(x):\n    return x\n\n\ndef g():\n" \
        "    w = torch.randn(3, requires_grad=True)\n    y = torch.sigmoid(w)\n    f(y)\n    y.sum().backward()\n"
    stopped, typed = (first.replace("    return x\n", body) for body in ("    return x + 0\n",
                                                                         "    x.mul_(2)\n    return x\n"))
    project = project_index(use_jedi=False)
    opened = OpenDocument("stopped.py")
    opened.analyse(first, Settings(), project)
    with pytest.raises(Cancelled):
        opened.analyse(stopped, Settings(), project, cancelled=lambda: True)
    found = opened.analyse(typed, Settings(), project)
    assert [(f.code, f.span.start.line) for f in found] == [("GG001", 308)]
    assert shown(found) == shown(analyse_document(Document.parse("stopped.py", typed), Settings(), project))
