"""Entry points that no code they may run could change a tensor in are not interpreted
(`analysis/quiet.py`, `analysis/code_facts.py`): the findings stay those of interpreting every one."""

from __future__ import annotations

import gc

import libcst as cst
import pytest
from helpers import CORPUS, ROOT

from gradguard.analysis import interpreter
from gradguard.analysis.code_facts import POSITIONAL_INPLACE, code_facts
from gradguard.analysis.interpreter import Interpreter, interpret
from gradguard.cli.files import mentions_torch
from gradguard.config import ProjectSettings
from gradguard.engine import analyse_document, project_index
from gradguard.source.document import Document
from gradguard.source.files import read_source


def _changes(body: str) -> bool:
    function = cst.parse_module("def f(x, ks, model, opt):\n" + "".join(f"    {line}\n" for line in body.splitlines()))
    return code_facts(function.body[0]).changes


@pytest.mark.parametrize("body", [
    "x += 1",  # a parameter: a tensor may come in
    "loss = 0\nfor k in ks:\n    loss += model(k)",  # the sum of tensors is one after the first turn
    "n = 0\nn += x",  # what is added may be a tensor
    "n = g()\nn += 1",
    "x[0] = 1",
    "y = x\ny[1:] = 0",
    "d = {}\nd = g()\nd[0] = 1",  # no longer a new dict
    "out = []\nout[0] += x",  # the element may be a tensor
    "x.data = x * 2",
    "x.add_(1)",
    "torch.nn.init.zeros_(x)",
    "f = getattr(x, 'mul_')",
    "y = x.data",
    "opt.step()",
    "model.load_state_dict(ks)",
    "y = Fn.apply(x)",
    "y = F.relu(x, inplace=flag)",
    "y = F.relu(x, True)",
    "act = nn.ReLU(True)",
    "drop = nn.Dropout(0.1, True)",
    "act = nn.ReLU(*flags)",
    "kwargs = {'inplace': True}",  # for a `**kwargs` of a constructor
    "emb = nn.Embedding(10, 3, None, 1.0)",
    "y = torch.add(x, 1, out=x)",
    "y = F.batch_norm(x, rm, rv, training=True)",
    "for x[0] in ks:\n    pass",
    "g = functools.reduce(operator.imul, ks)",  # `a *= b`
])
def test_a_line_that_may_change_a_tensor(body):
    assert _changes(body)


@pytest.mark.parametrize("body", [
    "y = x * 2\nreturn y.sum()",
    "n = len(ks)\nn -= 1",  # a length is never a tensor
    "names = ('a', 'b')\nnames += ('c',)",
    "d = {}\nfor k in ks:\n    d[k] = model(k)",  # a new dict's items
    "out = []\nout[0] = x",
    "cfg = dict(a=1)\ncfg['b'] = x",
    "x = {'a': 1}\nx['a'] = 2",  # a string key: a dict's item
    "y = F.relu(x)",
    "act = nn.ReLU()",
    "drop = nn.Dropout(0.1)",  # `p`, not `inplace`
    "y = F.dropout(x, 0.1, True)",  # `training`
    "y = x.detach()",
    "g = functools.reduce(operator.mul, ks)",
])
def test_a_body_that_changes_no_tensor(body):
    assert not _changes(body)


def test_the_positional_places_of_inplace_are_torchs():
    import inspect

    import torch.nn as nn
    import torch.nn.functional as F

    for name, given in POSITIONAL_INPLACE.items():
        function = getattr(F, name, None) or getattr(nn, name).__init__
        flag = "max_norm" if name.startswith("Embedding") else "inplace"
        positional = [p.name for p in inspect.signature(function).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"]
        assert positional.index(flag) + 1 == given, name


def test_a_global_statement_is_seen():
    function = cst.parse_module("def f():\n    global COUNT\n    COUNT = 1\n").body[0]
    assert code_facts(function).declares_global  # what it binds, later analyses see


_PROGRAM = (ROOT / "tests" / "programs" / "quiet_caller_stands_for_helper_ok.py").read_text()
# its `Block`, whose activation is not in place unless asked, in a model that asks as its caller says
_QUIET = _PROGRAM[_PROGRAM.index("import torch"):_PROGRAM.index("class Net")].replace(
    "def __init__(self, inplace=True)", "def __init__(self, inplace=False)") + """class Net(nn.Module):
    def __init__(self, inplace):
        super().__init__()
        self.block = Block(inplace)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.block(x))

    def features(self, x):
        h = self.block(x)
        h.clamp_(0, 1)
        return h


def build(inplace):
    return Net(inplace)
"""


def _units(source: str) -> dict[str, object]:
    result = interpret(cst.parse_module(source), "m.py")
    return {f"{result.definitions.owner_of(f) or ''}.{f.name.value}": u.quiet_over for f, u in result.units.items()}


def test_entry_points_whose_code_changes_no_tensor_are_not_interpreted():
    units = _units(_QUIET.replace("Block(inplace)", "Block(False)"))
    assert units["Net.forward"] is not None and units["Block.forward"] is not None  # no module built in place
    assert {f.name.value for f in units["Net.forward"]} == {"forward"}  # the block's forward, its own
    assert units["Net.features"] is None  # `clamp_` in its own body
    assert units[".build"] is None  # it builds a `ReLU` whose `inplace` its caller gives: the call may follow


def test_the_own_forward_runs_only_when_the_object_is_called():
    units = _units(_QUIET.replace("Block(inplace)", "Block(False)") + """

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        y = self.fc(x)
        y.relu_()
        return y

    def width(self):
        return self.fc.out_features

    def twice(self, x):
        return self(x) + self(x)

    def through(self, x):
        return run(self, x)


def run(module, x):
    return module(x)
""")
    assert units["Head.forward"] is None
    assert units["Head.width"] is not None  # `forward`, which changes a tensor, does not run
    assert units["Head.twice"] is None and units["Head.through"] is None  # `self` is called, or given away


def test_a_module_built_in_place_in_the_tree_is_a_change():
    units = _units(_QUIET.replace("Block(inplace)", "Block(True)"))
    assert units["Net.forward"] is None
    assert units["Block.forward"] is not None  # its own template: the default, not in place


def test_interpreting_every_entry_point_gives_the_same_findings(monkeypatch):
    """Over the labelled programs of the repository and of the shared corpus: each file's findings
    with quiet entry points left out are those of interpreting all of them, and an entry point
    taken for quiet changes nothing when it is interpreted."""
    folders = [ROOT / "tests" / "programs", ROOT / "tests" / "cases", ROOT / "examples",
               CORPUS / "cases", CORPUS / "programs"]
    paths = [path for folder in folders if folder.is_dir() for path in sorted(folder.rglob("*.py"))]
    assert len(paths) > 400
    # a quarter of them (each analysed twice): the programs on quiet entry points, and the corpus, all
    files = {path: raw for n, path in enumerate(paths) if (n % 4 == 0 or "quiet" in path.name
                                                             or path.is_relative_to(CORPUS))
             and mentions_torch(raw := path.read_bytes())}
    judged = Interpreter._quiet_over
    quiet_but_changing: list[str] = []

    def interpreted(self, deferred):
        over = judged(self, deferred)
        if over is not None:  # interpret it all the same: it must change nothing
            before = len(self.run_state.result.changes)
            self.parts.frames.analyse_function(deferred.function, self_value=self.parts.module_objects.instance_copy(
                deferred.template), is_forward=deferred.is_forward)
            if len(self.run_state.result.changes) != before:
                quiet_but_changing.append(f"{self.run_state.definitions.path}: {deferred.function.name.value}")
            del self.run_state.result.changes[before:]
            self.run_state.deferred = [d for d in self.run_state.deferred if d.function is not deferred.function]
        return None

    def findings() -> dict[str, list[tuple[str, str, str]]]:
        settings, project = ProjectSettings(no_config=True), project_index(use_jedi=False)
        found = {}
        for path, raw in files.items():
            text = read_source(path, raw).text
            document = Document.parse(str(path), text, project.parsed(str(path), text))
            found[str(path)] = [(f.code, str(f.span), f.message)
                                for f in analyse_document(document, settings.for_path(path), project)]
            gc.collect()
        return found

    pruned = findings()
    monkeypatch.setattr(interpreter.Interpreter, "_quiet_over", interpreted)
    assert findings() == pruned
    assert quiet_but_changing == []


def test_a_quiet_caller_is_interpreted_when_its_call_stands_for_a_helpers_own_findings():
    """`Block`'s own analysis (its default: ReLU in place after sigmoid) warns; `Net` builds it
    otherwise, and its `forward`, quiet, is interpreted after all: its call stands for the block's
    (`tests/programs/quiet_caller_stands_for_helper_ok.py`, which torch runs without an error; here
    without its module-level run, whose call would stand for it)."""
    source = _PROGRAM[:_PROGRAM.index("net = Net()")]
    result = interpret(cst.parse_module(source), "m.py")
    units = {f"{result.definitions.owner_of(f)}.{f.name.value}": u for f, u in result.units.items()}
    assert units["Block.forward"].changes  # its own analysis, which the call stands for
    assert units["Net.forward"].quiet_over is None and units["Net.forward"].entered
    assert result.changes == []
