"""`gradguard check` as a user runs it: exit codes, text and JSON output, file discovery, noqa, config.

Exit codes, tracebacks and the config errors are checked on the real console script in a
subprocess; the rest calls `gradguard.__main__.main()` in-process (same code path, no start-up cost).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import gradguard
from gradguard.__main__ import main

from helpers import run, write

pytestmark = pytest.mark.usefixtures("isolated")

# A saved tensor changed in place (GG001 at line 4, column 1), sigmoid's call at line 3, column 5.
SIGMOID_MUL = """\
import torch
x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
y.mul_(2){tail}
y.sum().backward()
"""
SIGMOID_MUL_MESSAGE = ("`y` is the output of `torch.sigmoid` (line 3), which it saves for backward; "
                       "`mul_` changes it in place, so `backward()` will raise \"one of the variables needed for gradient computation has been modified by an inplace operation\".")
SIGMOID_RELATED_MESSAGE = "`torch.sigmoid` saved its output for backward here"
# SIGMOID_MUL in the default (full) text format: the header (`[*]`: a safe fix), the source lines, the fix.
SIGMOID_RAISES_MESSAGE = "`y.sum().backward()` raises here: its graph still needs what was changed"
SIGMOID_MUL_FULL = f"""\
{{path}}:4:1: GG001 [error] [*] {SIGMOID_MUL_MESSAGE}
  |
3 | y = torch.sigmoid(x)
  |     ---------------- {SIGMOID_RELATED_MESSAGE}
4 | y.mul_(2)
  | ^^^^^^^^^ GG001
5 | y.sum().backward()
  | ------------------ {SIGMOID_RAISES_MESSAGE}
  |
  = help: Rewrite out of place: `y = y.mul(2)`
"""
ONE_FIXABLE = "Found 1 problem.\n[*] 1 fixable with the `--fix` option.\n"

# A GG002 at line 3 and a GG001 at line 6.
LEAF_AND_SAVED = """\
import torch
w = torch.zeros(3, requires_grad=True)
w.add_(1)
x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
y.mul_(2)
(w.sum() + y.sum()).backward()
"""

CLEAN = """\
import torch
x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
y = y * 2
y.sum().backward()
"""

SYNTAX_ERROR = """\
import torch
def forward(x)
    return torch.sigmoid(x)
"""

JSON_KEYS = {"code", "severity", "message", "filename", "cell", "location", "end_location", "related", "fix", "url",
             "aten_op"}


def check(capsys, *args: str | Path) -> tuple[int, str, str]:
    """`gradguard check ARGS` in-process: (exit code, stdout, stderr)."""
    code = main(["check", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def check_json(capsys, *args: str | Path) -> tuple[int, list[dict]]:
    code, out, err = check(capsys, "--format", "json", *args)
    assert err == ""
    return code, json.loads(out)


def found(diagnostics: list[dict]) -> list[tuple[str, int, str]]:
    """(file name, line, code) of each diagnostic, in output order."""
    return [(Path(d["filename"]).name, d["location"]["row"], d["code"]) for d in diagnostics]


# --- exit codes (subprocess) -------------------------------------------------------------------

def test_exit_0_when_clean(tmp_path):
    write(tmp_path / "clean.py", CLEAN)
    proc = run("check", "clean.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "All checks passed!\n", "")


def test_exit_1_when_something_is_found(tmp_path):
    write(tmp_path / "bad.py", SIGMOID_MUL.format(tail=""))
    proc = run("check", "bad.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == SIGMOID_MUL_FULL.format(path="bad.py") + "\n" + ONE_FIXABLE
    assert proc.stderr == ""


def test_exit_zero_flag_reports_but_exits_0(tmp_path):
    write(tmp_path / "bad.py", SIGMOID_MUL.format(tail=""))
    proc = run("check", "--exit-zero", "bad.py", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == SIGMOID_MUL_FULL.format(path="bad.py") + "\n" + ONE_FIXABLE
    assert proc.stderr == ""


def test_exit_2_on_a_missing_path(tmp_path):
    write(tmp_path / "bad.py", SIGMOID_MUL.format(tail=""))
    proc = run("check", "bad.py", "nowhere.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "gradguard: no such file or folder: nowhere.py\n"


@pytest.mark.parametrize("args", [["check", "--bogus", "x.py"], ["check", "--format", "xml", "x.py"], ["lint"], []])
def test_exit_2_on_bad_usage(tmp_path, args):
    write(tmp_path / "x.py", CLEAN)
    proc = run(*args, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("usage: gradguard")
    assert "Traceback" not in proc.stderr


def test_syntax_error_is_gg000_at_the_error_exit_1_and_no_traceback(tmp_path):
    write(tmp_path / "broken.py", SYNTAX_ERROR)
    proc = run("check", "--format", "json", "broken.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    [diagnostic] = json.loads(proc.stdout)
    assert diagnostic["code"] == "GG000"
    assert diagnostic["severity"] == "error"
    assert diagnostic["message"] == "gradguard could not analyse this file: expected ':'"
    assert diagnostic["location"] == {"row": 2, "column": 15}
    assert diagnostic["filename"] == str((tmp_path / "broken.py").resolve())


def test_syntax_error_text_format(tmp_path):
    write(tmp_path / "broken.py", SYNTAX_ERROR)
    proc = run("check", "broken.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == (
        "broken.py:2:15: GG000 [error] gradguard could not analyse this file: expected ':'\n"
        "  |\n"
        "2 | def forward(x)\n"
        "  |               ^ GG000\n"
        "  |\n"
        "\n"
        "Found 1 problem.\n")  # no fix: no `[*]`, no fixable line
    assert proc.stderr == ""


def test_syntax_error_does_not_hide_other_files(tmp_path):
    write(tmp_path / "a_broken.py", SYNTAX_ERROR)
    write(tmp_path / "b_bad.py", SIGMOID_MUL.format(tail=""))
    proc = run("check", "--format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 1
    assert found(json.loads(proc.stdout)) == [("a_broken.py", 2, "GG000"), ("b_bad.py", 4, "GG001")]


def test_default_path_is_the_current_folder(tmp_path, capsys, monkeypatch):
    write(tmp_path / "sub" / "model.py", SIGMOID_MUL.format(tail=""))
    monkeypatch.chdir(tmp_path)
    code, out, err = check(capsys, "--output-format", "concise")
    assert code == 1
    assert out == f"sub/model.py:4:1: GG001 [error] [*] {SIGMOID_MUL_MESSAGE}\n{ONE_FIXABLE}"


def test_version(tmp_path):
    proc = run("--version", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == f"gradguard {gradguard.__version__}\n"


# --- text format -------------------------------------------------------------------------------

def test_text_format_path_line_column_code_severity_message_then_related(tmp_path, capsys, monkeypatch):
    write(tmp_path / "pkg" / "model.py", SIGMOID_MUL.format(tail=""))
    monkeypatch.chdir(tmp_path)
    code, out, err = check(capsys, "pkg")
    assert code == 1
    assert out == SIGMOID_MUL_FULL.format(path="pkg/model.py") + "\n" + ONE_FIXABLE  # the related line: in the snippet
    assert err == ""


def test_text_format_counts_problems(tmp_path, capsys):
    write(tmp_path / "two.py", LEAF_AND_SAVED)
    code, out, err = check(capsys, "--output-format", "concise", tmp_path / "two.py")
    assert code == 1
    *findings, found, fixable = out.splitlines()
    assert [line.split(": ")[1].split()[0] for line in findings] == ["GG002", "GG001"]
    assert (found, fixable, err) == ("Found 2 problems.", "[*] 2 fixable with the `--fix` option.", "")


# --- JSON --------------------------------------------------------------------------------------

def test_json_stdout_is_only_a_list_of_diagnostics_with_the_documented_keys(tmp_path):
    write(tmp_path / "bad.py", SIGMOID_MUL.format(tail=""))
    proc = run("check", "--format", "json", "bad.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == ""
    diagnostics = json.loads(proc.stdout)  # raises if anything else is on stdout
    assert isinstance(diagnostics, list) and len(diagnostics) == 1
    [d] = diagnostics
    assert set(d) == JSON_KEYS
    assert d["code"] == "GG001"
    assert d["severity"] == "error"
    assert d["message"] == SIGMOID_MUL_MESSAGE
    assert d["filename"] == str((tmp_path / "bad.py").resolve())
    assert Path(d["filename"]).is_absolute()
    assert d["location"] == {"row": 4, "column": 1}
    assert d["end_location"] == {"row": 4, "column": 10}
    assert d["cell"] is None
    assert d["related"] == [{"filename": str((tmp_path / "bad.py").resolve()), "cell": None,
                             "location": {"row": 3, "column": 5},
                             "message": SIGMOID_RELATED_MESSAGE},
                            {"filename": str((tmp_path / "bad.py").resolve()), "cell": None,
                             "location": {"row": 5, "column": 1},
                             "message": SIGMOID_RAISES_MESSAGE}]
    assert d["aten_op"] == "sigmoid"
    assert d["fix"] == {
        "message": "Rewrite out of place: `y = y.mul(2)`",
        "applicability": "safe",
        "edits": [{"content": "y = y.mul(2)", "cell": None, "location": {"row": 4, "column": 1},
                   "end_location": {"row": 4, "column": 10}}],
    }
    assert isinstance(d["url"], str) and d["url"]


def test_json_clean_is_an_empty_list(tmp_path):
    write(tmp_path / "clean.py", CLEAN)
    proc = run("check", "--format", "json", "clean.py", cwd=tmp_path)
    assert (proc.returncode, json.loads(proc.stdout), proc.stderr) == (0, [], "")


def test_json_every_diagnostic_has_the_same_shape(tmp_path, capsys):
    write(tmp_path / "two.py", LEAF_AND_SAVED)
    write(tmp_path / "broken.py", SYNTAX_ERROR)
    code, diagnostics = check_json(capsys, tmp_path)
    assert code == 1
    assert found(diagnostics) == [("broken.py", 2, "GG000"), ("two.py", 3, "GG002"), ("two.py", 6, "GG001")]
    for d in diagnostics:
        assert set(d) == JSON_KEYS
        assert set(d["location"]) == set(d["end_location"]) == {"row", "column"}
        assert all(set(r) == {"filename", "cell", "location", "message"} for r in d["related"])
        assert d["fix"] is None or set(d["fix"]) == {"message", "applicability", "edits"}
    leaf = diagnostics[1]
    assert leaf["related"] == [{"filename": str((tmp_path / "two.py").resolve()), "cell": None,
                                "location": {"row": 2, "column": 5}, "message": "the leaf was created here"}]


def test_columns_are_1_based_code_points(tmp_path, capsys):
    # 日, 本 and 😀 are one code point each (3, 3 and 4 bytes in UTF-8; 1, 1 and 2 UTF-16 units).
    write(tmp_path / "wide.py", (
        "import torch\n"
        "x = torch.randn(3, requires_grad=True)\n"
        's = "日本😀"; y = torch.sigmoid(x)\n'
        't = "日本😀"; y.mul_(2)\n'
        "y.sum().backward()\n"))
    code, [d] = check_json(capsys, tmp_path / "wide.py")
    assert code == 1
    assert d["code"] == "GG001"
    assert d["location"] == {"row": 4, "column": 12}
    assert d["end_location"] == {"row": 4, "column": 21}
    assert d["related"][0]["location"] == {"row": 3, "column": 16}
    code, out, _ = check(capsys, "--output-format", "concise", tmp_path / "wide.py")
    assert out == f"{tmp_path / 'wide.py'}:4:12: GG001 [error] [*] {SIGMOID_MUL_MESSAGE}\n{ONE_FIXABLE}"
    # full: the related line (3:16, same file) is underlined in the snippet, each wide character two columns
    code, out, _ = check(capsys, tmp_path / "wide.py")
    assert out.splitlines()[1:6] == [
        "  |",
        '3 | s = "日本😀"; y = torch.sigmoid(x)',
        f"  |                   ---------------- {SIGMOID_RELATED_MESSAGE}",
        '4 | t = "日本😀"; y.mul_(2)',
        "  |               ^^^^^^^^^ GG001",
    ]


def test_syntax_error_column_is_in_code_points(tmp_path, capsys):
    write(tmp_path / "wide.py", 'import torch\ns = "日本😀"; x = (1 +)\n')
    code, [d] = check_json(capsys, tmp_path / "wide.py")
    assert (code, d["code"], d["location"]) == (1, "GG000", {"row": 2, "column": 20})


# --- which files are read ----------------------------------------------------------------------

def test_undecodable_file_is_gg000(tmp_path, capsys):
    (tmp_path / "latin1.py").write_bytes(b'import torch\ns = "caf\xe9"\n')
    code, [d] = check_json(capsys, tmp_path / "latin1.py")
    assert code == 1
    assert (d["code"], d["severity"], d["location"]) == ("GG000", "error", {"row": 1, "column": 1})
    assert d["message"] == ("gradguard could not read this file: it is not valid utf-8: byte 0xe9 on line 2 "
                            "(invalid continuation byte); save it as UTF-8 or declare its encoding (PEP 263)")


def test_files_that_never_mention_torch_are_skipped(tmp_path, capsys):
    write(tmp_path / "broken_torch.py", SYNTAX_ERROR)
    write(tmp_path / "broken_other.py", SYNTAX_ERROR.replace("import torch\n", "import numpy\n")
          .replace("torch.sigmoid", "numpy.tanh"))
    code, diagnostics = check_json(capsys, tmp_path)
    assert found(diagnostics) == [("broken_torch.py", 2, "GG000")]
    code, diagnostics = check_json(capsys, tmp_path / "broken_other.py")
    assert (code, diagnostics) == (0, [])


def test_recursion_skips_virtualenvs_and_build_folders(tmp_path, capsys):
    bad = SIGMOID_MUL.format(tail="")
    for folder in ("src", ".venv/lib/python3.11/site-packages/pkg", "venv/lib", "build/lib", "dist",
                   ".git/hooks", "__pycache__", "pkg.egg-info", "node_modules/x"):
        write(tmp_path / folder / "model.py", bad)
    code, diagnostics = check_json(capsys, tmp_path)
    assert code == 1
    assert [Path(d["filename"]).relative_to(tmp_path.resolve()).as_posix() for d in diagnostics] == ["src/model.py"]


def test_explicit_file_in_a_skipped_folder_is_checked(tmp_path, capsys):
    path = write(tmp_path / "build" / "model.py", SIGMOID_MUL.format(tail=""))
    code, diagnostics = check_json(capsys, path)
    assert (code, found(diagnostics)) == (1, [("model.py", 4, "GG001")])


def test_only_python_files_are_read(tmp_path, capsys):
    write(tmp_path / "notes.txt", SIGMOID_MUL.format(tail=""))
    write(tmp_path / "model.py", SIGMOID_MUL.format(tail=""))
    code, diagnostics = check_json(capsys, tmp_path)
    assert found(diagnostics) == [("model.py", 4, "GG001")]


# --- noqa --------------------------------------------------------------------------------------

@pytest.mark.parametrize("comment, reported", [
    ("", ["GG001"]),
    ("  # noqa", []),
    ("  # noqa: GG001", []),
    ("  # noqa:GG001", []),
    ("  # NOQA: gg001", []),
    ("  # noqa: GG002, GG001", []),
    ("  # noqa: GG002", ["GG001"]),
    ("  # a comment, not a directive", ["GG001"]),
])
def test_noqa(tmp_path, capsys, comment, reported):
    write(tmp_path / "m.py", SIGMOID_MUL.format(tail=comment))
    code, diagnostics = check_json(capsys, tmp_path / "m.py")
    assert [d["code"] for d in diagnostics] == reported
    assert code == (1 if reported else 0)


def test_noqa_inside_a_string_is_not_a_directive(tmp_path, capsys):
    write(tmp_path / "m.py", SIGMOID_MUL.format(tail="").replace("y.mul_(2)", 's = "# noqa"; y.mul_(2)'))
    code, diagnostics = check_json(capsys, tmp_path / "m.py")
    assert found(diagnostics) == [("m.py", 4, "GG001")]


# --- --select / --ignore -----------------------------------------------------------------------

@pytest.mark.parametrize("flags, reported", [
    ([], [3, 6]),
    (["--select", "GG002"], [3]),
    (["--select", "GG001,GG002"], [3, 6]),
    (["--select", "gg001"], [6]),
    (["--select", "GG00"], [3, 6]),
    (["--ignore", "GG001"], [3]),
    (["--ignore", "GG001,GG002"], []),
    (["--select", "GG001", "--ignore", "GG001"], []),
])
def test_select_and_ignore_flags(tmp_path, capsys, flags, reported):
    write(tmp_path / "two.py", LEAF_AND_SAVED)
    code, diagnostics = check_json(capsys, "--no-config", *flags, tmp_path / "two.py")
    assert [d["location"]["row"] for d in diagnostics] == reported
    assert code == (1 if reported else 0)


# --- [tool.gradguard] in pyproject.toml --------------------------------------------------------

def project(tmp_path: Path, config: str) -> Path:
    write(tmp_path / "pyproject.toml", f"[project]\nname = \"demo\"\n\n[tool.gradguard]\n{config}\n")
    write(tmp_path / "two.py", LEAF_AND_SAVED)
    write(tmp_path / "legacy" / "old.py", LEAF_AND_SAVED)
    return tmp_path


@pytest.mark.parametrize("config, reported", [
    ("", [("two.py", 3, "GG002"), ("two.py", 6, "GG001"), ("old.py", 3, "GG002"), ("old.py", 6, "GG001")]),
    ('select = ["GG002"]', [("two.py", 3, "GG002"), ("old.py", 3, "GG002")]),
    ('ignore = ["GG001"]', [("two.py", 3, "GG002"), ("old.py", 3, "GG002")]),
    ('per-file-ignores = { "legacy/*.py" = ["GG001"] }',
     [("two.py", 3, "GG002"), ("two.py", 6, "GG001"), ("old.py", 3, "GG002")]),
    ('per-file-ignores = { "legacy/*" = ["GG"] }', [("two.py", 3, "GG002"), ("two.py", 6, "GG001")]),
])
def test_config_select_ignore_per_file_ignores(tmp_path, capsys, config, reported):
    root = project(tmp_path, config)
    code, diagnostics = check_json(capsys, root)
    assert found(diagnostics) == reported
    code, diagnostics = check_json(capsys, "--no-config", root)
    assert len(diagnostics) == 4, "--no-config must ignore [tool.gradguard]"


def test_config_exclude(tmp_path, capsys):
    root = project(tmp_path, 'exclude = ["legacy/*"]')
    code, diagnostics = check_json(capsys, root)
    assert found(diagnostics) == [("two.py", 3, "GG002"), ("two.py", 6, "GG001")]
    code, diagnostics = check_json(capsys, "--no-config", root)
    assert len(diagnostics) == 4


def test_config_is_found_from_a_file_argument(tmp_path, capsys):
    root = project(tmp_path, 'ignore = ["GG002"]')
    code, diagnostics = check_json(capsys, root / "legacy" / "old.py")
    assert found(diagnostics) == [("old.py", 6, "GG001")]


def apart(root: Path) -> Path:
    """two.py with its leaf changed inside an `if`: the `y.mul_(2)` after it runs (not only once the
    error PyTorch raises at the leaf is fixed)."""
    return write(root / "two.py", LEAF_AND_SAVED.replace("w.add_(1)\n", "if w.requires_grad:\n    w.add_(1)\n"))


def test_config_severities_change_the_severity_field(tmp_path, capsys):
    root = project(tmp_path, '[tool.gradguard.severities]\nGG001 = "warning"')
    apart(root)
    code, diagnostics = check_json(capsys, root / "two.py")
    assert code == 1
    assert [(d["code"], d["severity"]) for d in diagnostics] == [("GG002", "error"), ("GG001", "warning")]
    code, out, err = check(capsys, root / "two.py")
    assert f"{root / 'two.py'}:7:1: GG001 [warning] " in out
    code, diagnostics = check_json(capsys, "--no-config", root / "two.py")
    assert [(d["code"], d["severity"]) for d in diagnostics] == [("GG002", "error"), ("GG001", "error")]


def test_each_path_gets_its_own_projects_config(tmp_path, capsys):
    quiet = project(tmp_path / "quiet", 'ignore = ["GG001"]')
    loud = tmp_path / "loud"
    write(loud / "pyproject.toml", '[project]\nname = "loud"\n')
    write(loud / "two.py", LEAF_AND_SAVED)
    expected = {("loud", 3, "GG002"), ("loud", 6, "GG001"), ("quiet", 3, "GG002")}
    for order in ([loud / "two.py", quiet / "two.py"], [quiet / "two.py", loud / "two.py"]):
        code, diagnostics = check_json(capsys, *order)
        assert {(Path(d["filename"]).parent.name, d["location"]["row"], d["code"]) for d in diagnostics} == expected


def test_a_nested_project_found_while_walking_uses_its_own_config(tmp_path, capsys):
    root = project(tmp_path, 'ignore = ["GG002"]')
    write(root / "sub" / "pyproject.toml", '[project]\nname = "sub"\n\n[tool.gradguard]\nignore = ["GG001"]\n')
    write(root / "sub" / "inner.py", LEAF_AND_SAVED)
    code, diagnostics = check_json(capsys, root)
    assert found(diagnostics) == [("two.py", 6, "GG001"), ("old.py", 6, "GG001"), ("inner.py", 3, "GG002")]


def test_command_line_flags_apply_on_top_of_every_projects_config(tmp_path, capsys):
    quiet = project(tmp_path / "quiet", 'ignore = ["GG001"]')
    loud = tmp_path / "loud"
    write(loud / "pyproject.toml", '[project]\nname = "loud"\n')
    write(loud / "two.py", LEAF_AND_SAVED)
    code, diagnostics = check_json(capsys, "--ignore", "GG002", quiet / "two.py", loud / "two.py")
    assert [(Path(d["filename"]).parent.name, d["code"]) for d in diagnostics] == [("loud", "GG001")]
    code, diagnostics = check_json(capsys, "--no-config", quiet / "two.py", loud / "two.py")
    assert len(diagnostics) == 4, "--no-config must ignore every project's [tool.gradguard]"


def test_an_invalid_config_of_a_later_path_exits_2_before_any_output(tmp_path):
    write(tmp_path / "good" / "two.py", LEAF_AND_SAVED)
    bad = project(tmp_path / "bad", 'colour = "always"')
    proc = run("check", "good/two.py", "bad/two.py", cwd=tmp_path)
    message = f"gradguard: {(bad / 'pyproject.toml').resolve()}: unknown [tool.gradguard] keys: colour\n"
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", message)


def test_config_severity_codes_are_case_insensitive_like_select(tmp_path, capsys):
    root = project(tmp_path, '[tool.gradguard.severities]\ngg002 = "info"')
    apart(root)
    code, diagnostics = check_json(capsys, root / "two.py")
    assert [(d["code"], d["severity"]) for d in diagnostics] == [("GG002", "info"), ("GG001", "error")]


def test_command_line_select_overrides_config_select(tmp_path, capsys):
    root = project(tmp_path, 'select = ["GG002"]')
    code, diagnostics = check_json(capsys, "--select", "GG001", root / "two.py")
    assert found(diagnostics) == [("two.py", 6, "GG001")]


def test_a_nested_pyproject_without_the_table_keeps_the_settings_above(tmp_path, capsys):
    """As Ruff passes over a pyproject.toml without [tool.ruff]: the closest one with the table counts."""
    root = project(tmp_path, 'ignore = ["GG002"]\nexclude = ["sub/vendored.py"]')
    write(root / "sub" / "pyproject.toml", '[project]\nname = "sub"\n')
    write(root / "sub" / "inner.py", LEAF_AND_SAVED)
    write(root / "sub" / "vendored.py", LEAF_AND_SAVED)
    code, diagnostics = check_json(capsys, root)
    assert found(diagnostics) == [("two.py", 6, "GG001"), ("old.py", 6, "GG001"), ("inner.py", 6, "GG001")]
    code, diagnostics = check_json(capsys, root / "sub" / "inner.py")
    assert found(diagnostics) == [("inner.py", 6, "GG001")]


@pytest.mark.parametrize("config, flags, reported", [
    ('ignore = ["GG001"]', [], [3]),
    ('ignore = ["GG001"]', ["--select", "GG001"], [6]),  # the command line's select starts afresh
    ('ignore = ["GG001"]', ["--select", "GG"], [3, 6]),
    ('ignore = ["GG001"]', ["--extend-select", "GG001"], [3, 6]),  # on top of the configuration's rules
    ('ignore = ["GG001"]', ["--ignore", "GG002"], []),
    ('select = ["GG001"]', ["--extend-select", "GG002"], [3, 6]),
    ('select = ["GG001"]\nignore = ["GG"]', [], [6]),  # the more specific selector wins
    ('select = ["GG"]\nignore = ["GG00"]', [], []),
    ('select = ["GG002"]\nextend-select = ["GG001"]', [], [3, 6]),
    ('ignore = ["GG002"]', ["--ignore", "GG", "--select", "GG002"], [3]),
])
def test_command_line_rules_resolve_over_the_configuration_as_in_ruff(tmp_path, capsys, config, flags, reported):
    root = project(tmp_path, config)
    code, diagnostics = check_json(capsys, *flags, root / "two.py")
    assert [d["location"]["row"] for d in diagnostics] == reported


def test_config_option_gives_every_file_one_files_settings(tmp_path, capsys, monkeypatch):
    """`--config PATH` (as Ruff's): that file's [tool.gradguard] for every file, whatever the
    projects say; its globs are relative to the current folder."""
    root = project(tmp_path / "proj", 'select = ["GG001"]')
    write(tmp_path / "ci" / "ci.toml", '[tool.gradguard]\nselect = ["GG002"]\nexclude = ["/legacy"]\n')
    monkeypatch.chdir(root)
    code, diagnostics = check_json(capsys, "--config", tmp_path / "ci" / "ci.toml", ".")
    assert found(diagnostics) == [("two.py", 3, "GG002")]
    monkeypatch.chdir(tmp_path / "ci")
    code, diagnostics = check_json(capsys, "--config", "ci.toml", root)
    assert found(diagnostics) == [("two.py", 3, "GG002"), ("old.py", 3, "GG002")]


def test_config_option_refuses_a_file_without_the_table_and_no_config(tmp_path):
    root = project(tmp_path, "")
    write(root / "other.toml", '[project]\nname = "other"\n')
    proc = run("check", "--config", "other.toml", "two.py", cwd=root)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"gradguard: {root / 'other.toml'}: no [tool.gradguard] table\n"
    proc = run("check", "--config", "other.toml", "--no-config", "two.py", cwd=root)
    assert proc.returncode == 2
    assert proc.stderr.endswith("error: argument --no-config: not allowed with argument --config\n")


@pytest.mark.parametrize("values, reported", [
    ([], [6]),
    (["ignore = ['GG001']"], [3]),  # replaces the table's own `ignore`
    (["ignore = []"], [3, 6]),
    (["ignore=[]", "select = ['GG002']"], [3]),
    (["ci.toml", "ignore = []"], [3]),  # on top of the file --config names
])
def test_config_option_takes_settings_of_the_table_as_ruffs_does(tmp_path, capsys, monkeypatch, values, reported):
    root = project(tmp_path, 'ignore = ["GG002"]')
    write(root / "ci.toml", '[tool.gradguard]\nselect = ["GG002"]\nignore = ["GG002"]\n')
    monkeypatch.chdir(root)
    code, diagnostics = check_json(capsys, *(arg for value in values for arg in ("--config", value)), "two.py")
    assert [d["location"]["row"] for d in diagnostics] == reported


@pytest.mark.parametrize("values, message", [
    (["colour = 1"], "gradguard: --config: unknown [tool.gradguard] keys: colour\n"),
    (["ignore = 'GG99'"], "gradguard: --config: unknown rule code 'GG99' in [tool.gradguard] ignore (known codes: "
                          "GG000, GG001, GG002, GG003, GG004, GG005, GG100)\n"),
    (["nothing"], "gradguard: --config nothing: no such file, and no KEY=VALUE setting\n"),
    (["pyproject.toml", "ci.toml"], "gradguard: --config names 2 files: give one\n"),
])
def test_config_option_refuses_what_it_cannot_use(tmp_path, values, message):
    root = project(tmp_path, "")
    write(root / "ci.toml", "[tool.gradguard]\n")
    proc = run("check", *(arg for value in values for arg in ("--config", value)), "two.py", cwd=root)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", message)


def test_show_settings_prints_the_first_files_resolved_settings(tmp_path):
    root = project(tmp_path, 'ignore = ["GG004"]\nexclude = ["legacy"]\n'
                             '[tool.gradguard.severities]\nGG001 = "warning"\n'
                             '[tool.gradguard.per-file-ignores]\n"tests/*" = ["GG002"]')
    real = root.resolve()
    proc = run("check", "--show-settings", "--select", "GG001,GG004", "--python", sys.executable, ".", cwd=root)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == (
        f'Resolved settings for: "{real / "two.py"}"\n'
        f'Settings path: "{real / "pyproject.toml"}"\n'
        "\n"
        'rules = ["GG001", "GG004"]\n'
        'per-file-ignores = {"tests/*" = ["GG002"]}\n'
        'severities = {"GG001" = "warning"}\n'
        'exclude = ["legacy"]\n'
        f'root = "{real}"\n'
        f'python = "{sys.executable} (from --python)"\n')
    proc = run("check", "--show-settings", "--no-config", "two.py", cwd=root)
    assert proc.stdout.splitlines()[1:4] == ["Settings path: none (the defaults)", "",
                                             'rules = ["GG000", "GG001", "GG002", "GG003", "GG004", "GG005"]']


@pytest.mark.parametrize("config, message", [
    ('select = 5', "gradguard: [tool.gradguard] select must be a list of rule codes"),
    ('colour = "always"', "gradguard: unknown [tool.gradguard] keys: colour"),
    ('[tool.gradguard.severities]\nGG001 = "fatal"', "gradguard: [tool.gradguard.severities] GG001: use error, "
                                                     "warning or info"),
    ('select = [', None),  # TOML syntax error: names the file
])
def test_invalid_config_exits_2_with_one_clear_line(tmp_path, config, message):
    root = project(tmp_path, config)
    proc = run("check", "two.py", cwd=root)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    prefix = f"gradguard: {(root / 'pyproject.toml').resolve()}: "
    assert proc.stderr.startswith(prefix), "the message names the file at fault"
    if message is not None:
        assert proc.stderr == prefix + message.removeprefix("gradguard: ") + "\n"
    assert run("check", "--no-config", "two.py", cwd=root).returncode == 1, "--no-config must not read the file"


@pytest.mark.parametrize("config, key", [
    ('severities = "warning"', "severities"),
    ('per-file-ignores = ["legacy/*.py"]', "per-file-ignores"),
    ('exclude = 3', "exclude"),
    ('exclude = "legacy"', "exclude"),
    ('exclude = ["legacy", 3]', "exclude"),
])
def test_invalid_config_type_names_the_key(tmp_path, config, key):
    root = project(tmp_path, config)
    proc = run("check", "two.py", cwd=root)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("gradguard: ") and key in proc.stderr, proc.stderr


# --- unknown rule codes ------------------------------------------------------------------------

@pytest.mark.parametrize("flags, config, bad", [
    (["--select", "FOO"], "", "FOO"),
    (["--select", "GG001,GG0X"], "", "GG0X"),
    (["--ignore", "XYZ"], "", "XYZ"),
    (["--ignore", "GG999"], "", "GG999"),
    ([], 'select = ["XYZ"]', "XYZ"),
    ([], 'ignore = ["GG0010"]', "GG0010"),
    ([], 'per-file-ignores = { "legacy/*" = ["GG01"] }', "GG01"),
    ([], '[tool.gradguard.severities]\nGG999 = "warning"', "GG999"),
])
def test_unknown_rule_code_exits_2_with_one_line_naming_it(tmp_path, flags, config, bad):
    root = project(tmp_path, config)
    proc = run("check", *flags, "two.py", cwd=root)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("gradguard: ") and f"unknown rule code '{bad}' in " in proc.stderr, proc.stderr
    assert "GG001" in proc.stderr, "the message lists the known codes"


def test_unknown_command_line_code_is_refused_with_no_config_too(tmp_path):
    write(tmp_path / "two.py", LEAF_AND_SAVED)
    proc = run("check", "--no-config", "--select", "FOO", "two.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("gradguard: unknown rule code 'FOO' in --select "), proc.stderr


@pytest.mark.parametrize("prefix", ["GG", "GG0", "GG00", "GG001", "gg00"])
def test_any_prefix_of_a_known_code_is_accepted(tmp_path, capsys, prefix):
    root = project(tmp_path, f'select = ["{prefix}"]\nignore = ["{prefix}"]')
    code, diagnostics = check_json(capsys, root / "two.py")
    assert (code, diagnostics) == (0, [])
    code, diagnostics = check_json(capsys, "--no-config", "--select", prefix, root / "two.py")
    assert code == 1 and "GG001" in [d["code"] for d in diagnostics]


def test_severities_accept_prefixes_and_the_longest_wins(tmp_path, capsys):
    root = project(tmp_path, '[tool.gradguard.severities]\nGG00 = "info"\nGG001 = "warning"')
    apart(root)
    code, diagnostics = check_json(capsys, root / "two.py")
    assert [(d["code"], d["severity"]) for d in diagnostics] == [("GG002", "info"), ("GG001", "warning")]


# --- exclude -----------------------------------------------------------------------------------

EXCLUDE_TREE = ("two.py", "legacy/old.py", "legacy/sub/deep.py", "src/legacy/mid.py", "src/legacy.py",
                "src/model.py", "src/proto_pb2.py")


@pytest.mark.parametrize("patterns, kept", [
    ([], EXCLUDE_TREE),
    # no slash: any folder or file name, at any depth
    (["legacy"], ("two.py", "src/legacy.py", "src/model.py", "src/proto_pb2.py")),
    (["legacy*"], ("two.py", "src/model.py", "src/proto_pb2.py")),
    (["*_pb2.py"], ("two.py", "legacy/old.py", "legacy/sub/deep.py", "src/legacy/mid.py", "src/legacy.py",
                    "src/model.py")),
    (["legacy.py"], ("two.py", "legacy/old.py", "legacy/sub/deep.py", "src/legacy/mid.py", "src/model.py",
                     "src/proto_pb2.py")),
    # a trailing slash: folders only
    (["legacy*/"], ("two.py", "src/legacy.py", "src/model.py", "src/proto_pb2.py")),
    # a slash: relative to the folder of pyproject.toml
    (["legacy/*"], ("two.py", "src/legacy/mid.py", "src/legacy.py", "src/model.py", "src/proto_pb2.py")),
    (["/legacy"], ("two.py", "src/legacy/mid.py", "src/legacy.py", "src/model.py", "src/proto_pb2.py")),
    (["src/legacy"], ("two.py", "legacy/old.py", "legacy/sub/deep.py", "src/legacy.py", "src/model.py",
                      "src/proto_pb2.py")),
    # `*` stops at `/`; `**` crosses folders; `!` takes a file back
    (["src/*.py"], ("two.py", "legacy/old.py", "legacy/sub/deep.py", "src/legacy/mid.py")),
    (["src/**/*.py"], ("two.py", "legacy/old.py", "legacy/sub/deep.py")),
    (["**/legacy/*.py"], ("two.py", "legacy/sub/deep.py", "src/legacy.py", "src/model.py", "src/proto_pb2.py")),
    (["src/*.py", "!src/model.py"], ("two.py", "legacy/old.py", "legacy/sub/deep.py", "src/legacy/mid.py",
                                      "src/model.py")),
    (["legacy", "src"], ("two.py",)),
])
def test_config_exclude_is_gitignore_like(tmp_path, capsys, patterns, kept):
    root = tmp_path / "proj"
    write(root / "pyproject.toml", f"[tool.gradguard]\nexclude = {json.dumps(patterns)}\n")
    for name in EXCLUDE_TREE:
        write(root / name, LEAF_AND_SAVED)
    code, diagnostics = check_json(capsys, root)
    checked = sorted({Path(d["filename"]).relative_to(root.resolve()).as_posix() for d in diagnostics})
    assert checked == sorted(kept)
    code, diagnostics = check_json(capsys, "--no-config", root)
    assert len(diagnostics) == 2 * len(EXCLUDE_TREE)


def test_config_exclude_is_relative_to_the_pyproject_not_the_current_folder(tmp_path, capsys, monkeypatch):
    root = project(tmp_path, 'exclude = ["/legacy"]')
    write(root / "src" / "legacy" / "mid.py", LEAF_AND_SAVED)
    monkeypatch.chdir(root / "src")
    code, diagnostics = check_json(capsys, ".", root / "legacy")
    assert found(diagnostics) == [("mid.py", 3, "GG002"), ("mid.py", 6, "GG001")]


@pytest.mark.parametrize("cwd, flags, reported", [
    (".", [], ["two.py"]),
    (".", ["--exclude", "two.py"], ["old.py"]),  # replaces the configuration's exclude
    (".", ["--extend-exclude", "two.py"], []),  # adds to it
    (".", ["--exclude", "/old.py"], ["two.py", "old.py"]),  # relative to the current folder, as in Ruff
    ("legacy", ["--exclude", "/old.py"], ["two.py"]),
    ("legacy", ["--exclude", "*.py,!two.py"], ["two.py"]),
])
def test_exclude_flags_replace_or_extend_the_configurations(tmp_path, capsys, monkeypatch, cwd, flags, reported):
    root = project(tmp_path, 'exclude = ["legacy"]')
    monkeypatch.chdir(root / cwd)
    code, diagnostics = check_json(capsys, *flags, root)
    assert list(dict.fromkeys(name for name, _, _ in found(diagnostics))) == reported


def test_excluded_folders_are_not_walked_into(tmp_path):
    # Were `legacy` entered, its broken pyproject.toml and undecodable file would be read: exit 2 or GG000.
    root = project(tmp_path, 'exclude = ["legacy"]')
    write(root / "legacy" / "pyproject.toml", "[tool.gradguard]\ncolour = 1\n")
    (root / "legacy" / "latin1.py").write_bytes(b'import torch\ns = "caf\xe9"\n')
    proc = run("check", "--format", "json", ".", cwd=root)
    assert proc.returncode == 1, proc.stderr
    assert found(json.loads(proc.stdout)) == [("two.py", 3, "GG002"), ("two.py", 6, "GG001")]


def test_explicit_files_in_excluded_folders_are_excluded_too(tmp_path, capsys):
    root = project(tmp_path, 'exclude = ["legacy"]')
    (root / "legacy" / "latin1.py").write_bytes(b'import torch\ns = "caf\xe9"\n')
    code, diagnostics = check_json(capsys, root / "legacy" / "old.py", root / "legacy" / "latin1.py", root / "legacy")
    assert (code, diagnostics) == (0, [])


def test_a_change_after_one_that_surely_raises_in_the_same_block_is_information(tmp_path, capsys):
    """PyTorch raises at the leaf's `add_`: the `clamp_` after it runs only once that is fixed."""
    write(tmp_path / "attack.py", "import torch\n\n\ndef step(image, grad):\n    image.add_(0.1 * grad.sign())\n"
                                  "    image.clamp_(0, 1)\n    return image\n\n\n"
                                  "x = torch.rand(3, requires_grad=True)\nstep(x, torch.ones(3))\n")
    code, diagnostics = check_json(capsys, "--no-cache", tmp_path / "attack.py")
    assert code == 1
    assert [(d["location"]["row"], d["code"], d["severity"]) for d in diagnostics] == [
        (5, "GG002", "error"), (6, "GG002", "info")]
    assert diagnostics[1]["message"].endswith(
        "Not reached yet: PyTorch raises first at `image.add_(0.1 * grad.sign())` (line 5), earlier in the block; "
        "this runs once that is fixed.")



def test_a_change_inside_a_call_after_one_that_surely_raises_is_information(tmp_path, capsys):
    """PyTorch raises at the leaf's `+=`: the helper called on the next line never runs its `copy_`;
    called where nothing raised first, the same helper's change stays an error."""
    write(tmp_path / "pgd.py", "import torch\n\n\ndef project_(x_adv, x):\n    x_adv.copy_(torch.max(x_adv, x))\n\n\n"
                               "def attack(x, grad):\n    x_adv = x.clone().requires_grad_(True)\n"
                               "    x_adv += 0.1 * grad.sign()\n    project_(x_adv, x)\n    return x_adv\n\n\n"
                               "attack(torch.rand(3), torch.ones(3))\n")
    code, diagnostics = check_json(capsys, "--no-cache", tmp_path / "pgd.py")
    assert [(d["location"]["row"], d["code"], d["severity"]) for d in diagnostics] == [
        (5, "GG002", "info"), (10, "GG002", "error")]
    assert diagnostics[0]["message"].endswith(
        "Not reached yet: PyTorch raises first at `x_adv += 0.1 * grad.sign()` (line 10), earlier in the block; "
        "this runs once that is fixed.")
    write(tmp_path / "pgd.py", (tmp_path / "pgd.py").read_text().replace(
        "attack(torch.rand(3)", "project_(torch.rand(3, requires_grad=True), torch.rand(3))\nattack(torch.rand(3)"))
    code, diagnostics = check_json(capsys, "--no-cache", tmp_path / "pgd.py")
    assert [(d["location"]["row"], d["code"], d["severity"]) for d in diagnostics] == [
        (5, "GG002", "error"), (10, "GG002", "error")]

@pytest.mark.parametrize("name, program, reported", [
    ("loop.py", "import torch\n\nx = torch.randn(3, 2, 8)\nW = torch.randn(8, 16, requires_grad=True)\n"
                "h = torch.zeros(2, 8)\nfor t in range(3):\n    h.mul_(0.5)\n    gates = x[t] @ W\n"
                "    ingate, cellgate = gates.chunk(2, 1)\n    ingate.sigmoid_()\n"
                "    h, _ = (ingate * cellgate.tanh()).repeat(1, 2).chunk(2, 1)\nh.sum().backward()\n",
     [(7, "GG003", "error"), (10, "GG003", "error")]),  # `h` is a view from the second pass on: step 0 raises at 10
    ("layer.py", "import torch\n\n\ndef gated(x, weight, trainable=True):\n"
                 "    bias = torch.empty(weight.shape[1], requires_grad=trainable)\n    bias.fill_(0.0)\n"
                 "    gate, value = (x @ weight + bias).chunk(2, dim=-1)\n    gate.sigmoid_()\n"
                 "    return gate * value\n",
     [(6, "GG002", "error"), (8, "GG003", "error")]),  # `fill_` raises with the default only
])
def test_a_change_reached_before_the_raise_on_some_path_stays_an_error(tmp_path, capsys, name, program, reported):
    """The op that surely raises in a loop's later pass, or for a parameter's default, does not make
    what follows it unreached: a first pass, another caller reach it."""
    write(tmp_path / name, program)
    code, diagnostics = check_json(capsys, "--no-cache", tmp_path / name)
    assert [(d["location"]["row"], d["code"], d["severity"]) for d in diagnostics] == reported


def test_a_match_case_a_parameters_default_skips_is_a_warning_for_other_values(tmp_path, capsys):
    """`match mode:` on a default decides the case, as an `if` does; the case it skips still counts
    for callers passing another value."""
    write(tmp_path / "gate.py", "from torch import nn\n\n\nclass Gate(nn.Module):\n    def __init__(self):\n"
                                "        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n"
                                "    def forward(self, x, mode='softmax'):\n        match mode:\n"
                                "            case 'softmax':\n                attn = self.fc(x).softmax(-1)\n"
                                "            case 'sigmoid':\n                attn, _ = self.fc(x).sigmoid().chunk(2, -1)\n"
                                "                attn.mul_(0.5)\n            case _:\n                raise ValueError(mode)\n"
                                "        return attn\n")
    code, diagnostics = check_json(capsys, "--no-cache", tmp_path / "gate.py")
    assert [(d["location"]["row"], d["code"], d["severity"]) for d in diagnostics] == [(15, "GG003", "warning")]
    assert "(only when `mode` is given a value other than its default" in diagnostics[0]["message"]
