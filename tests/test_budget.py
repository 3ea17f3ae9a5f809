"""Bounded analysis, as `gradguard check` runs it: every file within its budget, a cut said once
per cut function as information (never an error, never a false alarm), the rest of the file
keeping its findings; flat chains and huge files that once took minutes finish at once."""

import gc
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradguard.analysis import budget
from gradguard.analysis.user_calls import MAX_FOLLOWED_CALLS
from gradguard.config import Settings
from gradguard.engine import analyse_text

from helpers import MODELS, made_by

CHECK = [sys.executable, "-m", "gradguard", "check", "--no-config", "--no-cache", "--format", "json"]
BUG = '''

def train():
    w = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(w)
    y += 1
    y.sum().backward()
'''
BUG_LINE = 6  # of BUG, counted from the line after the code before it


def check(path: Path) -> tuple[int, list[dict], float]:
    """Exit status, findings and the CPU seconds of `gradguard check --format json PATH`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([*CHECK, str(path)], capture_output=True, text=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout), after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def found(findings: list[dict]) -> list[tuple[str, str, int]]:
    return [(f["code"], f["severity"], f["location"]["row"]) for f in findings]


def lines_of(text: str, needle: str) -> list[int]:
    return [i for i, line in enumerate(text.splitlines(), 1) if needle in line]


REGISTER = """

def register(cls=None, group=None, **kwargs):
    if cls is not None:
        spec = convert_0(cls, kwargs.get("spec", ()))
        STORE[group] = spec
        return spec

    def bounded_register(cls):  # the decorator form: `@register(group="model")`
        register(cls=cls, group=group, **kwargs)
        return cls

    return bounded_register
"""


def config_store(levels: int = 8) -> str:
    """The shape of torch_geometric's `config_store.py`: `fill_config_store` calls a converter
    from five loops, which calls the next level from each branch of an `if` in its loop, and
    defines a wrapper in its loop; `register` is a decorator factory whose decorator calls it
    back; each converter writes an item of its argument, a line that may change a tensor (code that
    changes none is not interpreted: `quiet.py`). Then a real bug elsewhere in the file."""
    code = ["import torch", "", "STORE = {}", ""]
    for i in range(levels):
        then = f"convert_{i + 1}(x, spec)" if i + 1 < levels else "x"
        code += ["", f"def convert_{i}(x, spec):", "    for k in spec:", "        spec[0] = k",
                 "        def wrapper(default):", "            return lambda: default",
                 f"        if k == 1:\n            x = {then} * 2", f"        elif k == 2:\n            x = {then} + 1",
                 f"        else:\n            x = torch.tanh({then})", "    return x", ""]
    code += [REGISTER, "", "def fill_config_store(x, groups):",
             *(f"    for spec in groups[{g}]:\n        x = convert_0(x, spec)" for g in range(5)), "    return x"]
    return "\n".join(code) + BUG


def test_a_file_of_the_config_store_shape_finishes_within_its_budget_with_its_notes(tmp_path):
    text = config_store()
    (tmp_path / "config_store.py").write_text(text)
    code, findings, cpu = check(tmp_path / "config_store.py")
    assert cpu < 2.0 + 1.5  # the analysis within its 2 s, the interpreter's start (torch is not imported)
    defs = lines_of(text, "def ")
    notes = [f for f in findings if f["code"] == "GG000"]
    assert notes and all(f["severity"] == "info" for f in notes)
    assert {f["location"]["row"] for f in notes} <= set(defs)  # once per cut function, at its definition
    assert len(notes) == len({f["location"]["row"] for f in notes})
    assert any(f"it followed {MAX_FOLLOWED_CALLS} calls" in f["message"] for f in notes)  # `convert_2`'s, `convert_3`'s
    assert [f for f in findings if f["code"] != "GG000"] and found([f for f in findings if f["code"] != "GG000"]) == [
        ("GG001", "error", lines_of(text, "y += 1")[0])]  # the rest of the file keeps its findings
    assert code == 1


def test_a_function_defined_in_a_followed_call_is_analysed_once(tmp_path):
    """The real `config_store.py` ran for more than 7 minutes: each analysis of the decorator
    `bounded_register` followed its call of `register`, which queued `bounded_register` again."""
    text = config_store(levels=1)
    start = time.process_time()
    findings = analyse_text(str(tmp_path / "c.py"), text, Settings())
    assert time.process_time() - start < 1.0
    assert [(f.code, f.span.start.line) for f in findings] == [("GG001", lines_of(text, "y += 1")[0])]


def test_a_model_zoo_file_is_analysed_whole():
    """timm's `maxxvit.py`: 42 registered factories, each `return _create_maxxvit(...)`, which returns
    `build_model_with_cfg(MaxxVit, ...)` of another file. What such a call returns goes straight to
    the factory's `return`, with nothing saved before it: it can add no finding to the factory, and is
    not followed (each factory built the whole model, and the file was cut at its CPU budget with 33
    to 55 functions not analysed, a different count on each run). `MaxxVit.__init__`, which builds
    every stage, follows more than 400 calls and fewer than `MAX_FOLLOWED_CALLS`: no note at all."""
    made_by("make models", MODELS / "timm" / "models" / "maxxvit.py")
    code, findings, cpu = check(MODELS / "timm" / "models" / "maxxvit.py")
    assert findings == []
    assert cpu < 1.6 + 1.5


def test_a_returned_call_is_followed_when_code_of_its_own_runs_after_the_return(tmp_path):
    """`return make(h)` inside a `try` whose `finally` changes `h`: the call is followed (the
    `finally` runs after the `return`, on the tensor `make`'s layer saved)."""
    (tmp_path / "layers.py").write_text("import torch.nn as nn\n\n\ndef make(x):\n    lin = nn.Linear(3, 3)\n"
                                       "    return lin(x)\n")
    text = ("import torch\nfrom layers import make\n\n\ndef entry():\n"
            "    h = torch.randn(3, 3, requires_grad=True) * 2\n    try:\n        return make(h)\n"
            "    finally:\n        h.mul_(2)\n")
    (tmp_path / "main.py").write_text(text)
    code, findings, _ = check(tmp_path / "main.py")
    assert found(findings) == [("GG001", "warning", lines_of(text, "h.mul_(2)")[0])]


def test_torch_geometric_config_store_within_its_budget():
    made_by("make models", MODELS / "torch_geometric" / "config_store.py")
    code, findings, cpu = check(MODELS / "torch_geometric" / "config_store.py")
    assert (code, findings) == (0, []) and cpu < 2.0 + 1.5


def test_a_function_over_its_budget_keeps_what_it_found_before(monkeypatch):
    monkeypatch.setattr(budget, "FUNCTION_STEPS", 40)
    body = "".join(f"    h{i} = torch.tanh(h{i - 1 if i else ''})\n" for i in range(60))
    text = ("import torch\n\n\ndef long(h):\n    w = torch.randn(3, requires_grad=True)\n    y = w.exp()\n"
            "    y.mul_(2)\n" + body + "    z = w.exp()\n    z.mul_(2)\n    (y + z).sum().backward()\n")
    findings = analyse_text("long.py", text, Settings())
    assert [(f.code, f.severity.value, f.span.start.line) for f in findings] == [
        ("GG000", "info", 4), ("GG001", "warning", 7)]
    assert findings[0].message.startswith(
        "gradguard stopped analysing `long` part-way: it took more than its budget of")
    assert findings[0].span.start.column == 4  # the function's name


CLONED = '''import torch


def prepare(x, steps):
    for _ in steps:
        for _ in steps:
            for _ in steps:
                x = x * 1.0
    return x.clone()


w = torch.randn(3, requires_grad=True)
y = torch.sigmoid(w)
z = prepare(y, range(2))
z.add_(1)
y.sum().backward()
'''


def test_a_cut_call_concludes_nothing(monkeypatch):
    """`prepare` returns a clone: `z.add_(1)` is fine (torch runs the program). Cut, its result
    is unknown: no finding, where a cut that kept `z` bound to `y` would raise a false alarm."""
    monkeypatch.setattr(budget, "CALL_STEPS", 5)
    findings = analyse_text("cloned.py", CLONED, Settings())
    assert [(f.code, f.severity.value, f.span.start.line) for f in findings] == [("GG000", "info", 4)]
    assert findings[0].message.startswith("gradguard stopped following calls of `prepare`: it took more than")
    done = subprocess.run([sys.executable, "-c", CLONED], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("chain, terms", [("1", 6000), ("a", 20000)], ids=["6000-term sum", "20000-link attribute"])
def test_long_flat_expressions_finish_at_once(tmp_path, chain, terms):
    expression = "+".join(["1"] * terms) if chain == "1" else "a" + ".b" * terms
    text = f"import torch\n\ny = {expression}\n" + BUG
    (tmp_path / "flat.py").write_text(text)
    start = time.perf_counter()
    code, findings, _ = check(tmp_path / "flat.py")
    assert time.perf_counter() - start < 5.0
    assert found(findings) == [("GG000", "info", 3), ("GG001", "error", lines_of(text, "y += 1")[0])]
    assert findings[0]["message"].startswith(f"gradguard skipped this expression of {len(expression):,} characters")


def _long_line(shape: str, size: int) -> str:
    """One line of about `size` characters, of a kind generated files and notebooks hold."""
    if shape == "comment of digits":
        return "# " + "1" * size
    if shape == "comment of words":
        return "# " + "a.b+c (x) [3] 'q \"s " * (size // 22)
    if shape == "string":
        return "S = '" + "ab\\'c d" * (size // 8) + "'"
    if shape == "list of floats":
        return "D = [" + ", ".join(f"{i % 997 / 7:.4f}" for i in range(size // 8)) + "]"
    if shape == "nested lists":
        return "D = [" + ", ".join(f"[{i % 100}, {i % 7}]" for i in range(size // 10)) + "]"
    assert shape == "vocabulary"
    return "V = {" + ", ".join(f'"w{i}": {i}' for i in range(size // 14)) + "}"


@pytest.mark.parametrize("shape", ["comment of digits", "comment of words", "string", "list of floats",
                                   "nested lists", "vocabulary"])
def test_a_long_line_costs_time_in_proportion_to_its_length(tmp_path, shape):
    """A line of 5 MB is checked in seconds, at most 12 times the time of a line of 0.5 MB (the
    search for long chains once backtracked: 40,000 characters of digits took minutes). Long
    literals are not parsed, so they count against no size limit: the bug after them is found."""
    seconds, results = [], []
    for size in (500_000, 5_000_000):
        text = "import torch\n" + _long_line(shape, size) + "\n" + BUG
        (tmp_path / "long.py").write_text(text)
        start = time.perf_counter()
        code, findings, _ = check(tmp_path / "long.py")
        seconds.append(time.perf_counter() - start)
        results.append(found(findings))
    assert seconds[1] <= 10.0 and seconds[1] <= 12 * seconds[0], seconds
    bug = ("GG001", "error", 2 + BUG_LINE)
    if shape in ("comment of digits", "comment of words", "string"):  # code: over the size limit
        assert results == [[bug], [("GG000", "info", 1)]]
    else:
        assert results == [[bug], [bug]]


def test_a_long_literal_keeps_the_lines_and_columns_of_what_follows():
    data = "[" + ",\n".join(", ".join(str(i * 10 + j) for j in range(10)) for i in range(300)) + "]"
    text = f"import torch\nD = {data}; x = torch.randn(3, requires_grad=True); y = x.exp(); y.add_(1)\n" \
        "y.sum().backward()\n"
    [finding] = analyse_text("data.py", text, Settings())
    line = text.count("\n", 0, text.index("y.add_(1)")) + 1
    assert (finding.code, finding.span.start.line, finding.span.start.column) == \
        ("GG001", line, text.splitlines()[line - 1].index("y.add_(1)"))


def test_a_chain_under_the_limit_is_analysed_without_recursion_errors():
    text = "import torch\n\nx = torch.randn(3, requires_grad=True)\nn = " + "+".join(["1"] * 900) + \
        "\ny = torch.sigmoid(x) * n\ny = torch.sigmoid(x)\ny.add_(1)\ny.sum().backward()\n"
    findings = analyse_text("flat.py", text, Settings())
    assert [(f.code, f.severity.value, f.span.start.line) for f in findings] == [("GG001", "error", 7)]


def test_a_fix_never_writes_the_stand_in_of_a_skipped_chain(tmp_path):
    chain = "+".join(["1"] * 1500)
    text = ("import torch\n\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\n"
            f"y.add_({chain})\ny.sum().backward()\n")
    [finding, note] = analyse_text("fix.py", text, Settings())
    assert (finding.code, finding.span.start.line, note.code, note.span.start.line) == ("GG001", 5, "GG000", 5)
    assert [fix.message for fix in finding.fixes] == ["Clone the output of `torch.sigmoid` where it is saved"]
    (tmp_path / "fix.py").write_text(text)
    subprocess.run([*CHECK, "--fix", "--unsafe-fixes", str(tmp_path / "fix.py")], capture_output=True, timeout=120)
    assert (tmp_path / "fix.py").read_text() == text.replace("torch.sigmoid(x)", "torch.sigmoid(x).clone()")


def test_a_huge_file_is_skipped_as_information(tmp_path):
    line = "x = 1  # " + "padding " * 10 + "\n"
    text = "import torch\n" + line * (20_000_000 // len(line))
    (tmp_path / "generated.py").write_text(text)
    start = time.perf_counter()
    code, findings, _ = check(tmp_path / "generated.py")
    assert time.perf_counter() - start < 10.0
    assert (code, found(findings)) == (0, [("GG000", "info", 1)])  # information fails nothing
    assert findings[0]["message"] == \
        f"gradguard skips this file: it has {len(text.encode()):,} bytes, over the limit of 8,000,000"  # never read


def test_an_analysis_leaves_its_states_and_parts_to_reference_counting():
    """Nothing of the interpreter's own waits for the garbage collector once an analysis is over:
    no `State` (branches joined), no part, no nested function of gradguard's (a deep copy, a
    comprehension's clauses). Each collection walks what it finds: `gradguard check` once spent a
    twentieth of its time there."""
    program = (Path(__file__).parent / "programs" / "gpt_block_causal_attention_residual_iadd.py").read_text()
    settings = Settings()
    assert analyse_text("gpt.py", program, settings)  # the program has its finding
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        analyse_text("gpt.py", program, settings)
        gc.collect()
        left = {type(o).__name__ for o in gc.garbage} | {
            o.__qualname__ for o in gc.garbage if callable(o) and getattr(o, "__module__", "").startswith("gradguard")}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
    assert not left & {"State", "InterpreterState", "Parts", "Statements", "Expressions"}
    assert not {name for name in left if "<locals>" in name}


def test_a_layer_built_from_the_same_config_in_each_constructor_is_built_once(monkeypatch):
    """transformers' shape: each class's `__init__` builds the one before it from `config`, an
    argument of unknown type. Each class statement runs its `__init__` to learn its submodules;
    the call `Block(config)` it makes is summarised and copied, so a chain of classes costs
    a run of each `__init__` (its cost grew with the square of the chain's length: 56 runs for 12 classes)."""
    from gradguard.analysis.user_calls import UserCalls

    chain = ["import torch.nn as nn", "", "", "class Block0(nn.Module):", "    def __init__(self, config):",
             "        super().__init__()", "        self.lin = nn.Linear(config.hidden, config.hidden)", ""]
    for n in range(1, 12):
        chain += ["", f"class Block{n}(nn.Module):", "    def __init__(self, config):", "        super().__init__()",
                  f"        self.inner = Block{n - 1}(config)", "        self.act = nn.GELU()", ""]
    runs: list[str] = []
    followed = UserCalls.run_user_function

    def counted(self, function, *args, **kwargs):
        runs.append(function.name.value)
        return followed(self, function, *args, **kwargs)

    monkeypatch.setattr(UserCalls, "run_user_function", counted)
    assert analyse_text("chain.py", "\n".join(chain), Settings()) == []
    assert runs.count("__init__") == 11  # Block0's to Block10's, each once, followed from the class after it


def test_a_call_left_unfollowed_inside_gives_no_summary(tmp_path):
    """`make()` called five calls deep leaves its `act()` unfollowed (the depth), so its result there
    is not what it builds: analysed first, in `deep`, it must not stand for `make()` at the top of
    `shallow`, whose sigmoid output is changed in place (torch raises when `shallow` runs)."""
    chain = "".join(f"def d{n}(x):\n    return d{n + 1}(x)\n\n\n" for n in range(1, 5))
    text = ("import torch\nfrom torch import nn\n\n\ndef act():\n    return nn.Sigmoid()\n\n\n"
            "def make():\n    return nn.Sequential(nn.Linear(3, 3), act())\n\n\n"
            f"def d5(x):\n    return make()(x)\n\n\n{chain}"
            "def deep(x):\n    y = d1(x)\n    y.sum().backward()\n\n\n"
            "def shallow(x):\n    m = make()\n    y = m(x)\n    y.add_(1)\n    y.sum().backward()\n")
    path = tmp_path / "layers.py"
    path.write_text(text)
    _, findings, _ = check(path)
    assert found(findings) == [("GG001", "error", lines_of(text, "y.add_(1)")[0])]
    run = subprocess.run([sys.executable, "-c", f"{text}\nshallow(torch.randn(2, 3, requires_grad=True))"],
                         capture_output=True, text=True, timeout=120)
    assert "modified by an inplace operation" in run.stderr
