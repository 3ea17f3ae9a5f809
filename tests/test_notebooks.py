"""Jupyter notebooks on the command line: tests/notebooks/ holds notebooks whose code cells, run
in order with torch (run_notebooks.py, no kernel), raise what their `# expect:` markers say (or
run cleanly: `_ok`); `gradguard check` must report exactly the marked (cell, line, code), in
cells numbered as Ruff numbers them, and `--fix` must edit only the cells' sources, after which
the notebooks run cleanly."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard.source.notebook import Notebook, NotANotebook
from helpers import GRADGUARD, MARK, ROOT, run, write

NOTEBOOKS = ROOT / "tests" / "notebooks"
NAMES = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
FAILING = [name for name in NAMES if not name.endswith("_ok.ipynb")]
FAMILIES = {"GG001": "modified by an inplace operation", "GG002": "leaf Variable that requires grad"}


def cell_markers(path: Path) -> set[tuple[int, int, str]]:
    """(cell, line, code) of each `# expect:` marker in the notebook's code cells (cells from 1, among all)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {(number, line, match.group(1)) for number, cell in enumerate(cells, 1) if cell["cell_type"] == "code"
            for line, text in enumerate("".join(cell["source"]).splitlines(), 1)
            for match in [MARK.search(text)] if match}


def run_in_order(*paths: Path) -> dict[str, dict]:
    """run_notebooks.py over `paths`, in one process: file name -> {cell, error}."""
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "run_notebooks.py"), *map(str, paths)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {Path(r["path"]).name: r for r in map(json.loads, proc.stdout.splitlines())}


def test_the_notebooks_do_what_their_markers_say_when_run_with_torch():
    outcomes = run_in_order(*(NOTEBOOKS / name for name in NAMES))
    assert len(FAILING) >= 4 and len(NAMES) > len(FAILING)
    for name in NAMES:
        marks = cell_markers(NOTEBOOKS / name)
        outcome = outcomes[name]
        assert name.endswith("_ok.ipynb") == (not marks), name
        if not marks:
            assert outcome["error"] is None, (name, outcome)
            continue
        [code] = {code for _, _, code in marks}
        assert outcome["error"] is not None and FAMILIES[code] in outcome["error"], (name, outcome)
        assert outcome["cell"] >= max(cell for cell, _, _ in marks), (name, outcome)


def test_check_reports_exactly_the_marked_cells_lines_and_codes():
    proc = run("check", "--output-format", "json", "--no-cache", "--no-config", ".", cwd=NOTEBOOKS)
    assert proc.returncode == 1, proc.stderr
    found: dict[str, set[tuple[int, int, str]]] = {}
    for d in json.loads(proc.stdout):
        found.setdefault(Path(d["filename"]).name, set()).add((d["cell"], d["location"]["row"], d["code"]))
    assert found == {name: cell_markers(NOTEBOOKS / name) for name in FAILING}


def test_text_names_the_cell_as_ruff_does_and_the_earlier_cell_that_saved(tmp_path):
    shutil.copy(NOTEBOOKS / "cell_pair_exp.ipynb", tmp_path / "nb.ipynb")
    proc = run("check", "--no-cache", "--output-format", "concise", "--quiet", "nb.ipynb", cwd=tmp_path)
    assert proc.stdout == (
        "nb.ipynb:cell 3:2:1: GG001 [error] [*] `y` is the output of `x.exp` (cell 2, line 5), which it saves"
        " for backward; `+=` changes it in place, so `backward()` will raise \"one of the variables needed for gradient computation has been modified by an inplace operation\".\n")
    full = run("check", "--no-cache", "nb.ipynb", cwd=tmp_path)
    assert full.stdout.splitlines()[1:7] == [
        "  |",
        "2 | y += 1  # expect: GG001",
        "  | ^^^^^^ GG001",
        "3 | y.sum().backward()",
        "  | ------------------ `y.sum().backward()` raises here: its graph still needs what was changed",
        "  |",
    ]
    assert "  = note: nb.ipynb:cell 2:5:5: `x.exp` saved its output for backward here" in full.stdout
    assert full.returncode == 1 and full.stdout.endswith("\n\nFound 1 problem.\n[*] 1 fixable with the `--fix` option.\n")


def test_json_and_sarif_carry_the_cell_and_cell_local_positions(tmp_path):
    shutil.copy(NOTEBOOKS / "cell_pair_exp.ipynb", tmp_path / "nb.ipynb")
    [d] = json.loads(run("check", "--no-cache", "--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert (d["cell"], d["location"], d["end_location"]) == (3, {"row": 2, "column": 1}, {"row": 2, "column": 7})
    assert [(r["cell"], r["location"]) for r in d["related"]] == [(2, {"row": 5, "column": 5}),
                                                                  (3, {"row": 3, "column": 1})]
    assert d["fix"]["edits"] == [{"content": "y = y + 1", "cell": 3, "location": {"row": 2, "column": 1},
                                  "end_location": {"row": 2, "column": 7}}]
    sarif = json.loads(run("check", "--no-cache", "--output-format", "sarif", "nb.ipynb", cwd=tmp_path).stdout)
    [result] = sarif["runs"][0]["results"]
    [location] = result["locations"]
    assert location == {"physicalLocation": {
        "artifactLocation": {"uri": (tmp_path / "nb.ipynb").resolve().as_uri()},
        "region": {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 7}}, "properties": {"cell": 3}}
    assert result["relatedLocations"][0]["properties"] == {"cell": 2}
    assert result["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 5
    github = run("check", "--no-cache", "--output-format", "github", "nb.ipynb", cwd=tmp_path).stdout
    assert github.startswith("::error file=nb.ipynb,line=2,col=1,endLine=2,endColumn=7,title=GG001::cell 3: GG001 ")


# --- --fix and --diff ----------------------------------------------------------------------------

def _line(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# notebook -> (the JSON text of the source element or string before, after): nothing else may change
EXPECTED_REPLACEMENTS = {
    "cell_pair_exp.ipynb": (_line("y += 1  # expect: GG001\n"), _line("y = y + 1  # expect: GG001\n")),
    "time_magic_sigmoid.ipynb": (_line("h.mul_(2)  # expect: GG001\n"), _line("h = h.mul(2)  # expect: GG001\n")),
    "string_sources_indent2.ipynb": (
        _line('a.add_(1)  # expect: GG001\na.sum().backward()\nprint("naïve — 学習", layer.weight.grad)\n'),
        _line('a = a.add(1)  # expect: GG001\na.sum().backward()\nprint("naïve — 学習", layer.weight.grad)\n')),
    "leaf_changed_in_later_cell.ipynb": (
        _line("w.add_(1)  # expect: GG002\n"),
        _line("with torch.no_grad():\n") + ",\n    " + _line("    w.add_(1)  # expect: GG002\n")),
}


def test_fix_edits_only_the_cell_sources_and_the_fixed_notebooks_run_cleanly(tmp_path):
    assert set(EXPECTED_REPLACEMENTS) == set(FAILING)
    for name in FAILING:
        shutil.copy(NOTEBOOKS / name, tmp_path / name)
    proc = run("check", "--fix", "--no-config", *FAILING, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Found {len(FAILING)} problems ({len(FAILING)} fixed, 0 remaining)." in proc.stdout
    for name in FAILING:
        before, after = EXPECTED_REPLACEMENTS[name]
        original = (NOTEBOOKS / name).read_bytes()
        assert original.count(before.encode()) == 1, name
        assert (tmp_path / name).read_bytes() == original.replace(before.encode(), after.encode()), name
    outcomes = run_in_order(*(tmp_path / name for name in FAILING))
    assert all(outcome["error"] is None for outcome in outcomes.values()), outcomes
    again = run("check", "--no-cache", "--no-config", *FAILING, cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "All checks passed!\n")


def test_diff_shows_each_changed_cell_and_writes_nothing(tmp_path):
    shutil.copy(NOTEBOOKS / "cell_pair_exp.ipynb", tmp_path / "nb.ipynb")
    proc = run("check", "--diff", "nb.ipynb", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ("--- nb.ipynb:cell 3\n+++ nb.ipynb:cell 3\n@@ -1,3 +1,3 @@\n !echo training\n"
                           "-y += 1  # expect: GG001\n+y = y + 1  # expect: GG001\n y.sum().backward()\n"
                           "Would fix 1 problem.\n")
    assert (tmp_path / "nb.ipynb").read_bytes() == (NOTEBOOKS / "cell_pair_exp.ipynb").read_bytes()


def test_standard_input_named_as_a_notebook_is_read_as_one(tmp_path):
    text = (NOTEBOOKS / "cell_pair_exp.ipynb").read_text(encoding="utf-8")
    proc = subprocess.run([str(GRADGUARD), "check", "--stdin-filename", "nb.ipynb", "--fix", "-"], input=text,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    before, after = EXPECTED_REPLACEMENTS["cell_pair_exp.ipynb"]
    assert (proc.returncode, proc.stdout) == (0, text.replace(before, after))


# --- which notebooks are read --------------------------------------------------------------------

def test_a_walk_includes_notebooks_and_exclude_applies_to_them(tmp_path):
    shutil.copy(NOTEBOOKS / "cell_pair_exp.ipynb", tmp_path / "train.ipynb")
    shutil.copy(NOTEBOOKS / "leaf_changed_in_later_cell.ipynb", tmp_path / "scratch.ipynb")
    write(tmp_path / "pyproject.toml", '[tool.gradguard]\nexclude = ["scratch.ipynb"]\n')
    (tmp_path / ".ipynb_checkpoints").mkdir()  # Jupyter's autosaved copies are not the user's notebooks
    shutil.copy(NOTEBOOKS / "cell_pair_exp.ipynb", tmp_path / ".ipynb_checkpoints" / "train-checkpoint.ipynb")
    proc = run("check", "--no-cache", "--output-format", "concise", "--quiet", cwd=tmp_path)
    assert [line.split(":")[0:2] for line in proc.stdout.splitlines()] == [["train.ipynb", "cell 3"]]


def test_the_cache_places_findings_in_the_current_cells(tmp_path):
    """The cache keys a notebook by its program: a markdown cell added above moves the finding's cell."""
    path = tmp_path / "nb.ipynb"
    shutil.copy(NOTEBOOKS / "cell_pair_exp.ipynb", path)
    first = run("check", "--output-format", "concise", "nb.ipynb", cwd=tmp_path)
    assert first.stdout.startswith("nb.ipynb:cell 3:2:1: GG001")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": ["# Title"]})
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    second = run("check", "--output-format", "concise", "nb.ipynb", cwd=tmp_path)
    assert second.stdout.startswith("nb.ipynb:cell 4:2:1: GG001 [error] [*] `y` is the output of `x.exp` (cell 3,")
    data["cells"][2]["source"][3] = "x = torch.randn(4, requires_grad=False)\n"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    third = run("check", "--output-format", "concise", "nb.ipynb", cwd=tmp_path)
    assert (third.returncode, third.stdout) == (0, "All checks passed!\n")


@pytest.mark.parametrize("text, message", [
    ("{ not json torch", "not a notebook: its JSON is invalid (Expecting property name enclosed in double quotes: "
                         "line 1 column 3 (char 2))"),
    ("{", "not a notebook: its JSON is invalid (Expecting property name enclosed in double quotes: "
          "line 1 column 2 (char 1))"),
    ('{"nbformat": 3, "worksheets": [], "cells": [], "metadata": {"torch": 1}}',
     "only nbformat 4 notebooks are read, not nbformat 3"),
    ('["torch"]', "not a notebook: its JSON is an array, not an object"),
    ("[]", "not a notebook: its JSON is an array, not an object"),
    ("null", "not a notebook: its JSON is null, not an object"),
    ("{}", 'not a notebook: it has no "cells"'),
    ('{"cells": 5}', 'not a notebook: its "cells" is not a list'),
    ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": "x = 1"}, 5]}', "not a notebook: cell 2 is not an object"),
    ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": 5}]}',
     'not a notebook: the "source" of cell 1 is neither a string nor a list of strings'),
    ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": ["import torch\\n", 5]}]}',  # was an internal error
     'not a notebook: the "source" of cell 1 is neither a string nor a list of strings'),
])
def test_a_file_that_is_no_notebook_is_reported_unreadable_whether_it_mentions_torch_or_not(tmp_path, text, message):
    """A `.py` that never mentions torch has nothing to check; a `.ipynb` that is no notebook is
    reported all the same (it passed silently, unless it held the word torch)."""
    write(tmp_path / "nb.ipynb", text)
    for cache in ("--no-cache", "--cache-dir=.cache", "--cache-dir=.cache"):
        proc = run("check", cache, "--output-format", "concise", "--quiet", "nb.ipynb", cwd=tmp_path)
        assert (proc.returncode, proc.stdout) == (
            1, f"nb.ipynb:1:1: GG000 [error] gradguard could not read this file: {message}\n"), proc.stderr


# --- the notebook model --------------------------------------------------------------------------

def _notebook(*cells: tuple[str, str], **metadata) -> Notebook:
    return Notebook.parse(json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": source}
                                                for kind, source in cells],
                                      "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}, indent=1))


def test_ipython_lines_are_masked_keeping_lines_and_columns():
    notebook = _notebook(("code", "%matplotlib inline\nfiles = !ls\nfor f in files:\n    !echo $f\n"
                                  "torch.zeros?\nx = 1  # 100% sure?\ny = 2\n"))
    assert notebook.program == ("pass\npass\nfor f in files:\n    pass\npass\nx = 1  # 100% sure?\ny = 2\n")


def test_only_lines_that_start_a_statement_are_ipython_s():
    source = ('y = (1\n     % 2)\nz = (3\n     != 4)\ns = """\n%d items\n!not a shell line\n"""\n'
              "w = x \\\n    % 3\n!echo (\nv = 1\n")
    assert _notebook(("code", source)).program == source.replace("!echo (", "pass")


def test_cell_magics_keep_python_only_when_they_run_it_once():
    notebook = _notebook(("code", "%%time\na = 1\n"), ("code", "%%timeit\nb = 2\n"), ("code", "%%bash\nls\n"),
                         ("markdown", "c = 3\n"), ("code", "%%capture out\nd = 4"), ("raw", "e = 5\n"))
    assert notebook.program == "pass\na = 1\npass\nd = 4\n"
    assert [notebook.cell_at(line)[0].number for line in (1, 2, 3, 4)] == [1, 1, 5, 5]
    assert notebook.program_line(5, 2) == 4 and notebook.program_line(2, 1) is None


def test_cells_in_another_language_are_left_out():
    r = _notebook(("code", "x <- 1\n"), kernelspec={"language": "R", "name": "ir"})
    assert r.program == ""
    mixed = Notebook.parse(json.dumps({"cells": [
        {"cell_type": "code", "metadata": {"vscode": {"languageId": "sql"}}, "source": "select 1"},
        {"cell_type": "code", "metadata": {}, "source": "x = 1"}], "metadata": {}, "nbformat": 4}))
    assert mixed.program == "x = 1\n"


def test_an_empty_source_gets_lines_in_the_file_s_own_layout():
    notebook = _notebook(("code", []), ("code", ["a = 1\n", "b = 2"]))
    edited = notebook.with_sources({1: "x = 1\ny = 2\n"})
    assert edited.cells[0].source == "x = 1\ny = 2\n"
    assert '"source": [\n    "x = 1\\n",\n    "y = 2\\n"\n   ]' in edited.text
    assert edited.text.replace('[\n    "x = 1\\n",\n    "y = 2\\n"\n   ]', "[]") == notebook.text


def test_nbformat_3_is_refused():
    with pytest.raises(NotANotebook):
        Notebook.parse('{"nbformat": 3, "worksheets": []}')


# --- gradguard verify ----------------------------------------------------------------------------

def test_verify_runs_the_cells_in_order_and_reports_by_cell(tmp_path):
    for name in ("cell_pair_exp.ipynb", "time_magic_sigmoid.ipynb", "other_languages_ok.ipynb"):
        shutil.copy(NOTEBOOKS / name, tmp_path / name)
    proc = run("verify", "--format", "json", "cell_pair_exp.ipynb", "time_magic_sigmoid.ipynb",
               "other_languages_ok.ipynb", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    found = {(Path(v["filename"]).name, v["cell"], v["location"]["row"], v["code"], v["origin"])
             for v in json.loads(proc.stdout)}
    assert found == {("cell_pair_exp.ipynb", 3, 2, "GG001", "both"), ("time_magic_sigmoid.ipynb", 3, 2, "GG001", "both")}
    clean = run("verify", "other_languages_ok.ipynb", cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    shutil.copy(NOTEBOOKS / "leaf_changed_in_later_cell.ipynb", tmp_path / "leaf.ipynb")
    leaf = run("verify", "leaf.ipynb", cwd=tmp_path)
    assert leaf.returncode == 1 and leaf.stdout.startswith("leaf.ipynb:cell 3:1:1: GG002")
    assert 'File "leaf.ipynb", cell 3, line 1, in <module>\n    w.add_(1)' in leaf.stderr, leaf.stderr


def test_add_noqa_writes_in_the_cells_and_silences_them(tmp_path):
    shutil.copy(NOTEBOOKS / "cell_pair_exp.ipynb", tmp_path / "nb.ipynb")
    proc = run("check", "--add-noqa", "--no-cache", "nb.ipynb", cwd=tmp_path)
    assert proc.returncode == 0 and "Added 1 noqa directive." in proc.stderr, proc.stderr
    before, _ = EXPECTED_REPLACEMENTS["cell_pair_exp.ipynb"]
    assert (tmp_path / "nb.ipynb").read_bytes() == (NOTEBOOKS / "cell_pair_exp.ipynb").read_bytes().replace(
        before.encode(), _line("y += 1  # expect: GG001  # noqa: GG001\n").encode())
    again = run("check", "--no-cache", "nb.ipynb", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "All checks passed!\n")


def test_a_notebook_whose_outputs_are_larger_than_a_source_file_may_be_is_read(tmp_path):
    """Images in the outputs make notebooks large: the size limit of source files (8 MB) is not theirs."""
    data = json.loads((NOTEBOOKS / "cell_pair_exp.ipynb").read_text(encoding="utf-8"))
    data["cells"][1]["outputs"] = [{"output_type": "display_data", "metadata": {},
                                    "data": {"image/png": "A" * 9_000_000, "text/plain": ["<Figure>"]}}]
    (tmp_path / "nb.ipynb").write_text(json.dumps(data, indent=1), encoding="utf-8")
    proc = run("check", "--no-cache", "--output-format", "concise", "nb.ipynb", cwd=tmp_path)
    assert proc.stdout.startswith("nb.ipynb:cell 3:2:1: GG001"), proc.stdout + proc.stderr


def test_a_cell_that_does_not_parse_is_reported_and_the_others_are_analysed(tmp_path):
    data = json.loads((NOTEBOOKS / "cell_pair_exp.ipynb").read_text(encoding="utf-8"))
    data["cells"].insert(2, {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                             "source": ["def half_written(x:\n", "    return x\n"]})
    (tmp_path / "nb.ipynb").write_text(json.dumps(data, indent=1), encoding="utf-8")
    proc = run("check", "--no-cache", "--output-format", "concise", "--quiet", "nb.ipynb", cwd=tmp_path)
    assert [line.split(" [")[0] for line in proc.stdout.splitlines()] == [
        "nb.ipynb:cell 3:1:17: GG000", "nb.ipynb:cell 4:2:1: GG001"]
    assert "'(' was never closed: gradguard skips lines 1–2 until they parse" in proc.stdout
    fixed = run("check", "--fix", "nb.ipynb", cwd=tmp_path)
    assert "Found 2 problems (1 fixed, 1 remaining)." in fixed.stdout
    assert json.loads((tmp_path / "nb.ipynb").read_text(encoding="utf-8"))["cells"][3]["source"][1] == \
        "y = y + 1  # expect: GG001\n"


PARSE_UNITS = [("markdown", "# Cells that do not parse on their own"),
               ("code", "import torch\n\nx = torch.randn(4, requires_grad=True)\ny = x.exp()\n"),
               ("code", "z = torch.cat([y,\n"),  # ends inside a bracket ...
               ("code", "y])\n"),  # ... that this cell closes: together they would parse
               ("code", "for step in range(2):\n    h = x * step\n"),
               ("code", "    y.mul_(2)\n"),  # indented: not the loop's body
               ("code", "y += 1\ny.sum().backward()\n"),
               ("code", 'doc = """Training notes\n'),  # ends inside a string ...
               ("code", 'more notes"""\n')]  # ... that this cell closes


def _written(path: Path, cells: list[tuple[str, str]]) -> Path:
    path.write_text(json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": source,
                                           **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                                          for kind, source in cells],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1), encoding="utf-8")
    return path


def test_each_cell_is_a_parse_unit_of_its_own(tmp_path):
    """A kernel compiles each cell on its own: a cell that ends inside a bracket or a string does
    not take in the next cell, an indented cell is not the body of the previous one's loop."""
    broken = {3, 4, 6, 8, 9}
    outcomes = run_in_order(_written(tmp_path / "nb.ipynb", PARSE_UNITS), _written(
        tmp_path / "parsing.ipynb", [(kind, "" if n in broken else source) for n, (kind, source) in
                                     enumerate(PARSE_UNITS, 1)]))
    assert (outcomes["nb.ipynb"]["cell"], outcomes["nb.ipynb"]["error"]) == (3, "SyntaxError: '[' was never closed "
                                                                                "(<cell 3>, line 1)")
    parsing = outcomes["parsing.ipynb"]
    assert parsing["cell"] == 7 and "modified by an inplace operation" in parsing["error"]
    proc = run("check", "--no-cache", "--output-format", "concise", "--quiet", "nb.ipynb", cwd=tmp_path)
    skipped = ": gradguard skips line 1 until it parses; the rest of the file is analysed"
    assert proc.stdout.splitlines() == [
        "nb.ipynb:cell 3:1:15: GG000 [error] '[' was never closed" + skipped,
        "nb.ipynb:cell 4:1:2: GG000 [error] unmatched ']'" + skipped,
        "nb.ipynb:cell 6:1:4: GG000 [error] unexpected indent" + skipped,
        "nb.ipynb:cell 7:1:1: GG001 [error] [*] `y` is the output of `x.exp` (cell 2, line 4), which it saves for "
        "backward; `+=` changes it in place, so `backward()` will raise \"one of the variables needed for gradient computation has been modified by an inplace operation\".",
        "nb.ipynb:cell 8:1:7: GG000 [error] unterminated triple-quoted string literal (detected at line 1)" + skipped,
        "nb.ipynb:cell 9:1:11: GG000 [error] unterminated triple-quoted string literal (detected at line 1)" + skipped]
    verified = run("verify", "--format", "json", "nb.ipynb", cwd=tmp_path)
    assert {(v["cell"], v["location"]["row"], v["location"]["column"], v["code"], v["origin"])
            for v in json.loads(verified.stdout)} == {(3, 1, 15, "GV001", "runtime"), (7, 1, 1, "GG001", "static")}
    assert verified.stderr.startswith('  File "nb.ipynb", cell 3, line 1\n    z = torch.cat([y,\n                  ^\n'
                                      "SyntaxError: '[' was never closed\n"), verified.stderr
