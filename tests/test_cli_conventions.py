"""`gradguard check` follows the conventions Ruff users have in their fingers: the full text format
(source line, caret, related line, fix), colours, `[*]` and the closing summary, the concise and
JSON-lines formats, `--statistics`, `--show-fixes`, `--quiet`/`--silent`, standard input,
`.gitignore`, `--add-noqa`, `--extend-select`, `--per-file-ignores`, `--select ALL`,
`--exit-non-zero-on-fix`, the cache at the project root, and usage errors naming `check`.

Outputs are compared exactly; most tests call `main()` in-process, those that need standard input
or a terminal's environment run the console script.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gradguard.__main__ import FORMATS, main
from gradguard.cli.report import FORMATS as REPORT_FORMATS

from helpers import GRADGUARD, write

pytestmark = pytest.mark.usefixtures("isolated")

# GG001 at line 4 (safe fix) and GG002 at line 6 (safe fix: no_grad).
TWO = """\
import torch
x = torch.ones(2, requires_grad=True)
y = x.sigmoid()
y += 1
w = torch.zeros(3, requires_grad=True)
w.add_(1)
(y.sum() + w.sum()).backward()
"""
FULL_TWO = """\
{path}:4:1: GG001 [error] [*] `y` is the output of `x.sigmoid` (line 3), which it saves for backward; `+=` changes it in place, so `backward()` will raise \"one of the variables needed for gradient computation has been modified by an inplace operation\".
  |
3 | y = x.sigmoid()
  |     ----------- `x.sigmoid` saved its output for backward here
4 | y += 1
  | ^^^^^^ GG001
...
7 | (y.sum() + w.sum()).backward()
  | ------------------------------ `(y.sum() + w.sum()).backward()` raises here: its graph still needs what was changed
  |
  = help: Rewrite out of place: `y = y + 1`

{path}:6:1: GG002 [error] [*] `w` is a leaf that requires grad (`torch.zeros`); `add_` changes it in place outside `torch.no_grad()`, so PyTorch raises "a leaf Variable that requires grad is being used in an in-place operation".
  |
5 | w = torch.zeros(3, requires_grad=True)
  |     ---------------------------------- the leaf was created here
6 | w.add_(1)
  | ^^^^^^^^^ GG002
  |
  = help: Wrap in `with torch.no_grad():`
"""
FOUND_TWO = "Found 2 problems.\n[*] 2 fixable with the `--fix` option.\n"
# `relu_` on what `relu_` saved (GG001 at line 5, column 5): its one fix, dropping `inplace=True`, is unsafe.
RELU_TWICE = """\
import torch
import torch.nn.functional as F
x = torch.ones(2, requires_grad=True)
h = F.relu(x * 2, inplace=True)
h = F.relu(h, inplace=True)
h.sum().backward()
"""
CLEAN = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"


def check(capsys, *args: str | Path) -> tuple[int, str, str]:
    code = main(["check", "--no-cache", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def console(*args: str | Path, cwd: Path, stdin: str = "", env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(GRADGUARD), *map(str, args)], input=stdin, capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=env)


def test_the_formats_the_parser_offers_are_the_reports(capsys):
    assert FORMATS == REPORT_FORMATS


def test_full_is_the_default_with_source_caret_related_line_and_fix(tmp_path, capsys):
    path = write(tmp_path / "two.py", TWO)
    assert check(capsys, path) == (1, FULL_TWO.format(path=path) + "\n" + FOUND_TWO, "")


def test_concise_and_the_format_alias(tmp_path, capsys):
    path = write(tmp_path / "two.py", TWO)
    code, out, err = check(capsys, "--format", "concise", path)
    assert code == 1
    assert out == "".join(line + "\n" for line in FULL_TWO.format(path=path).splitlines()
                          if line.startswith(str(path))) + FOUND_TWO  # no blank line before it, as Ruff's
    assert check(capsys, "--output-format", "concise", path)[1] == out


def test_json_lines_is_one_object_a_line(tmp_path, capsys):
    path = write(tmp_path / "two.py", TWO)
    code, out, err = check(capsys, "--output-format", "json-lines", path)
    assert (code, err) == (1, "")
    assert [(d["code"], d["aten_op"]) for d in map(json.loads, out.splitlines())] == [("GG001", "sigmoid"), ("GG002", None)]
    assert "`sigmoid`" not in out.splitlines()[0]  # the ATen name is for tools: the message says `x.sigmoid`
    code, out, err = check(capsys, "--output-format", "json", path)
    assert [json.loads(line) for line in check(capsys, "--output-format", "json-lines", path)[1].splitlines()] \
        == json.loads(out)


def test_clean_says_all_checks_passed(tmp_path, capsys):
    assert check(capsys, write(tmp_path / "clean.py", CLEAN)) == (0, "All checks passed!\n", "")


def test_colours_on_a_terminal_or_forced_and_never_with_no_color(tmp_path):
    path = write(tmp_path / "two.py", TWO)
    forced = console("check", "--no-cache", "--output-format", "concise", path, cwd=tmp_path,
                     env={"FORCE_COLOR": "1", "PATH": "/usr/bin:/bin"})
    assert forced.stdout.splitlines()[0] == (
        f"\x1b[1m{path}:4:1:\x1b[0m \x1b[1;31mGG001\x1b[0m [error] \x1b[36m[*]\x1b[0m `y` is the output of "
        "`x.sigmoid` (line 3), which it saves for backward; `+=` changes it in place, so `backward()` will raise \"one of the variables needed for gradient computation has been modified by an inplace operation\".")
    both = console("check", "--no-cache", path, cwd=tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    piped = console("check", "--no-cache", path, cwd=tmp_path)
    assert "\x1b[" not in both.stdout and both.stdout == piped.stdout == FULL_TWO.format(path=path) + "\n" + FOUND_TWO


def test_an_unsafe_only_fix_is_a_hidden_fix_in_the_summary_and_the_diff(tmp_path, capsys):
    path = write(tmp_path / "relu.py", RELU_TWICE)
    code, out, err = check(capsys, path)
    assert out.splitlines()[0].startswith(f"{path}:5:5: GG001 [error] `F.relu(..., inplace=True)` changes")
    block, summary = out.rsplit("\n\n", 1)
    assert block.splitlines()[-1] == "  = help: Remove `inplace=True` (unsafe: it may change what the code computes; " \
                                     "--unsafe-fixes applies it)"
    assert (summary, err) == (
        "Found 1 problem.\nNo fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n", "")
    assert check(capsys, "--diff", path) == (
        0, "Would fix 0 problems (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n", "")
    assert check(capsys, "--unsafe-fixes", path)[1].endswith("\n\nFound 1 problem.\n[*] 1 fixable with the `--fix` option.\n")
    assert path.read_text() == RELU_TWICE


def test_statistics_counts_by_rule(tmp_path, capsys):
    write(tmp_path / "a.py", TWO)
    write(tmp_path / "b.py", TWO.replace("w.add_(1)\n", "w.add_(1)\n"))
    assert check(capsys, "--statistics", tmp_path) == (
        1, "2\tGG001\t[*] saved-tensor-modified-inplace\n2\tGG002\t[*] leaf-modified-inplace\n"
        "Found 4 problems.\n[*] 4 fixable with the `--fix` option.\n", "")


def test_fix_with_show_fixes_lists_what_was_fixed(tmp_path, capsys):
    path = write(tmp_path / "two.py", TWO)
    assert check(capsys, "--fix", "--show-fixes", path) == (0, (
        f"Fixed 2 problems:\n- {path}:\n    1 × GG001 (saved-tensor-modified-inplace)\n"
        "    1 × GG002 (leaf-modified-inplace)\nFound 2 problems (2 fixed, 0 remaining).\n"), "")


def test_quiet_keeps_the_findings_and_silent_prints_nothing(tmp_path, capsys):
    path = write(tmp_path / "two.py", TWO)
    assert check(capsys, "--quiet", path) == (1, FULL_TWO.format(path=path), "")
    assert check(capsys, "-q", write(tmp_path / "clean.py", CLEAN)) == (0, "", "")
    assert check(capsys, "--silent", path) == (1, "", "")
    assert check(capsys, "-s", "--fix", path) == (0, "", "")
    assert (tmp_path / "two.py").read_text() != TWO


def test_exit_non_zero_on_fix(tmp_path, capsys):
    path = write(tmp_path / "two.py", TWO)
    assert check(capsys, "--fix", "--exit-non-zero-on-fix", path)[0] == 1
    assert check(capsys, "--fix", "--exit-non-zero-on-fix", path)[0] == 0  # nothing left to fix


# --- input ---------------------------------------------------------------------------------------

def test_standard_input_with_a_file_name_uses_its_settings_and_name(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.gradguard]\nignore = ["GG002"]\n')
    result = console("check", "--output-format", "concise", "--stdin-filename", "src/two.py", cwd=tmp_path, stdin=TWO)
    assert result.returncode == 1
    assert [line.split(" ")[:2] for line in result.stdout.splitlines()[:-2]] == [["src/two.py:4:1:", "GG001"]]
    dash = console("check", "--output-format", "concise", "-", cwd=tmp_path, stdin=TWO)
    assert [line.split(" ")[:2] for line in dash.stdout.splitlines()[:-2]] == [["-:4:1:", "GG001"]]


def test_standard_input_fixed_goes_to_stdout_and_its_findings_to_stderr(tmp_path):
    source = TWO + RELU_TWICE.replace("import torch\n", "", 1).replace("x = torch.ones(2, requires_grad=True)\n", "")
    result = console("check", "--fix", "--output-format", "concise", "-", cwd=tmp_path, stdin=source)
    assert result.stdout == source.replace("y += 1", "y = y + 1").replace(
        "w.add_(1)", "with torch.no_grad():\n    w.add_(1)")
    assert result.stderr.splitlines() == [
        "-:11:5: GG001 [error] `F.relu(..., inplace=True)` changes the output of `F.relu` (line 10) in place, which "
        "it saves for backward, so `backward()` will raise \"one of the variables needed for gradient computation has been modified by an inplace operation\".",
        "Found 3 problems (2 fixed, 1 remaining).",
        "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."]
    assert result.returncode == 1


def test_a_walk_skips_what_gitignore_excludes_and_named_files_are_checked(tmp_path, capsys):
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".gitignore", "generated/\n*_pb2.py\n!keep_pb2.py\n")
    write(tmp_path / "sub" / ".gitignore", "local.py\n")
    for name in ("model.py", "generated/model.py", "x_pb2.py", "keep_pb2.py", "sub/local.py", "sub/other.py"):
        write(tmp_path / name, TWO)

    def names(*args: str | Path) -> list[str]:
        out = check(capsys, "--output-format", "json", *args)[1]
        return sorted({Path(d["filename"]).relative_to(tmp_path).as_posix() for d in json.loads(out)})

    assert names(tmp_path) == ["keep_pb2.py", "model.py", "sub/other.py"]
    assert names(tmp_path / "sub") == ["sub/other.py"]
    assert names(tmp_path / "generated" / "model.py", tmp_path / "sub" / "local.py") == [
        "generated/model.py", "sub/local.py"]
    assert names(tmp_path / "generated") == ["generated/model.py"]  # a folder named is checked, as Ruff does
    assert names("--no-respect-gitignore", tmp_path) == [
        "generated/model.py", "keep_pb2.py", "model.py", "sub/local.py", "sub/other.py", "x_pb2.py"]


def test_gitignore_outside_a_repository_is_not_read(tmp_path, capsys):
    write(tmp_path / ".gitignore", "*.py\n")
    path = write(tmp_path / "model.py", TWO)
    assert check(capsys, "--output-format", "concise", tmp_path)[1].splitlines()[0].startswith(f"{path}:4:1:")


def test_add_noqa_writes_each_code_once_and_keeps_the_codes_there(tmp_path, capsys):
    path = write(tmp_path / "two.py", TWO.replace("w.add_(1)", "w.add_(1)  # noqa: GG004  (explained)"))
    assert check(capsys, "--add-noqa", path) == (0, "", "Added 2 noqa directives.\n")
    assert path.read_text() == TWO.replace("y += 1", "y += 1  # noqa: GG001").replace(
        "w.add_(1)", "w.add_(1)  # noqa: GG004, GG002  (explained)")
    assert check(capsys, "--add-noqa", path) == (0, "", "Added 0 noqa directives.\n")
    assert check(capsys, path) == (0, "All checks passed!\n", "")


def test_add_noqa_leaves_a_line_continued_by_a_backslash(tmp_path, capsys):
    text = TWO.replace("y += 1", "y += \\\n    1")
    path = write(tmp_path / "cont.py", text)
    check(capsys, "--add-noqa", "--select", "GG001", path)
    assert path.read_text() == text


@pytest.mark.parametrize("flags, codes", [
    (["--select", "GG001", "--extend-select", "GG002"], ["GG001", "GG002"]),
    (["--select", "ALL"], ["GG001", "GG002"]),
    (["--select", "all", "--ignore", "GG001"], ["GG002"]),
    (["--per-file-ignores", "two.py:GG001"], ["GG002"]),
    (["--per-file-ignores", "*.py:GG001,GG002"], []),
    (["--per-file-ignores", "other.py:GG001"], ["GG001", "GG002"]),
])
def test_rule_selection_flags(tmp_path, capsys, flags, codes):
    path = write(tmp_path / "two.py", TWO)
    out = check(capsys, "--output-format", "json", *flags, path)[1]
    assert [d["code"] for d in json.loads(out)] == codes


def test_per_file_ignores_replaces_the_config_table_and_extend_adds_to_it(tmp_path, capsys):
    write(tmp_path / "pyproject.toml", '[tool.gradguard.per-file-ignores]\n"two.py" = ["GG002"]\n')
    path = write(tmp_path / "two.py", TWO)

    def codes(*flags: str) -> list[str]:
        return [d["code"] for d in json.loads(check(capsys, "--output-format", "json", *flags, path)[1])]

    assert codes() == ["GG001"]
    assert codes("--per-file-ignores", "x.py:GG001") == ["GG001", "GG002"]
    assert codes("--extend-per-file-ignores", "two.py:GG001") == []


@pytest.mark.parametrize("value", ["two.py", ":GG001", "two.py:", "two.py:XX9"])
def test_a_bad_per_file_ignore_is_a_usage_error(tmp_path, value):
    result = console("check", "--per-file-ignores", value, ".", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith(("gradguard check: error: argument --per-file-ignores: ",
                                                      "gradguard: unknown rule code 'XX9' in --per-file-ignores"))


def test_the_cache_sits_at_the_project_root(tmp_path):
    project = tmp_path / "project"
    write(project / "pyproject.toml", '[project]\nname = "p"\n')
    write(project / "src" / "pkg" / "two.py", TWO)
    result = console("check", "two.py", cwd=project / "src" / "pkg")
    assert result.returncode == 1
    assert (project / ".gradguard_cache").is_dir()
    assert not (project / "src" / "pkg" / ".gradguard_cache").exists()


def test_an_unknown_option_of_check_prints_checks_usage(tmp_path):
    result = console("check", "--bogus", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("usage: gradguard check ")
    assert result.stderr.splitlines()[-1] == "gradguard check: error: unrecognized arguments: --bogus"


def test_every_option_of_check_has_help(tmp_path):
    result = console("check", "--help", cwd=tmp_path)
    assert result.returncode == 0
    for option in ("paths", "--output-format", "--stdin-filename", "--add-noqa", "--statistics", "--show-fixes",
                   "--exit-non-zero-on-fix", "--extend-select", "--per-file-ignores", "--no-respect-gitignore"):
        assert option in result.stdout
    serve = console("lsp", "--help", cwd=tmp_path).stdout
    assert "the address to listen on" in serve and "with --tcp, the port" in serve


# --- rule documentation ------------------------------------------------------------------------

def test_every_rule_link_is_the_repositorys_page_of_that_rule():
    import tomllib

    from gradguard import REPOSITORY
    from gradguard.rules import RULES

    from helpers import ROOT

    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Repository"] == REPOSITORY
    for rule in RULES:
        assert rule.url == f"{REPOSITORY}/blob/main/docs/rules/{rule.code}.md"
        assert (ROOT / rule.url.removeprefix(f"{REPOSITORY}/blob/main/")).is_file()


def test_json_and_sarif_link_to_the_rule_pages(tmp_path, capsys):
    from gradguard import REPOSITORY

    path = write(tmp_path / "two.py", TWO)
    diagnostics = json.loads(check(capsys, "--output-format", "json", path)[1])
    assert [d["url"] for d in diagnostics] == [f"{REPOSITORY}/blob/main/docs/rules/GG001.md",
                                               f"{REPOSITORY}/blob/main/docs/rules/GG002.md"]
    driver = json.loads(check(capsys, "--output-format", "sarif", path)[1])["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == REPOSITORY
    assert {r["helpUri"] for r in driver["rules"]} == {f"{REPOSITORY}/blob/main/docs/rules/{r['id']}.md"
                                                      for r in driver["rules"]}


def test_rule_prints_the_documentation_page_offline(tmp_path, capsys):
    from helpers import ROOT

    assert main(["rule", "gg001"]) == 0
    out = capsys.readouterr().out
    page = (ROOT / "docs" / "rules" / "GG001.md").read_text()
    body = page.split("\n", 1)[1].removesuffix("\n[All rules](index.md)\n")  # without the generated-file comment
    assert out == f"{body}\nhttps://github.com/gradguard/gradguard/blob/main/docs/rules/GG001.md\n"
    assert main(["rule", "--all"]) == 0
    assert capsys.readouterr().out.count("\n# G") == 8
    assert main(["rule", "--all", "--output-format", "json"]) == 0
    rules = json.loads(capsys.readouterr().out)
    assert [r["code"] for r in rules] == ["GG000", "GG001", "GG002", "GG003", "GG004", "GG005", "GG100", "GV001", "GV002"]
    assert set(rules[1]) == {"code", "name", "summary", "documentation", "url"}
    assert main(["rule", "GG009"]) == 2
    assert capsys.readouterr().err == ("gradguard: unknown rule code 'GG009' (known codes: GG000, GG001, GG002, "
                                       "GG003, GG004, GG005, GG100, GV001, GV002)\n")


@pytest.mark.parametrize("code", ["GV001", "GV002"])
def test_rule_knows_the_codes_of_verify(capsys, code):
    """`gradguard verify` reports GV001/GV002: `gradguard rule` documents them as the rules."""
    from helpers import ROOT

    assert main(["rule", code.lower()]) == 0
    page = (ROOT / "docs" / "rules" / f"{code}.md").read_text()
    body = page.split("\n", 1)[1].removesuffix("\n[All rules](index.md)\n")
    assert capsys.readouterr().out == f"{body}\nhttps://github.com/gradguard/gradguard/blob/main/docs/rules/{code}.md\n"
    assert body.startswith(f"# {code} — ") and "## What to do" in body


def test_add_noqa_never_writes_into_a_string_and_refuses_fix_or_diff(tmp_path, capsys):
    text = TWO.replace("y += 1", 'y += 1; s = """doc\nstring"""')
    path = write(tmp_path / "doc.py", text)
    assert check(capsys, "--add-noqa", "--select", "GG001", path) == (0, "", "Added 0 noqa directives.\n")
    assert path.read_text() == text
    for flag in ("--fix", "--diff"):
        code, out, err = check(capsys, "--add-noqa", flag, path)
        assert (code, out) == (2, "")
        assert err == "gradguard: --add-noqa writes the files it checks: it takes neither standard input nor --fix/--diff\n"


def test_a_file_named_twice_or_reached_through_a_link_is_fixed_once(tmp_path, capsys):
    path = write(tmp_path / "d" / "two.py", TWO)
    (tmp_path / "d" / "link.py").symlink_to(path)
    assert check(capsys, "--fix", path, path, tmp_path / "d") == (0, "Found 2 problems (2 fixed, 0 remaining).\n", "")


# --- statistics as JSON, the output file, failing on errors only, watch mode -----------------------

# GG004 at line 4 (a warning: no error, wrong gradients) and nothing else.
WARNING_ONLY = """\
import torch
x = torch.randn(3, requires_grad=True)
y = torch.exp(x)
y.data.mul_(2)
y.sum().backward()
"""


def test_statistics_as_json_are_ruffs_and_other_machine_formats_are_refused(tmp_path, capsys):
    write(tmp_path / "a.py", TWO)
    write(tmp_path / "b.py", RELU_TWICE)
    code, out, err = check(capsys, "--statistics", "--output-format", "json", tmp_path)
    assert (code, err) == (1, "")
    assert json.loads(out) == [
        {"code": "GG001", "name": "saved-tensor-modified-inplace", "count": 2, "fixable": False, "fixable_count": 1},
        {"code": "GG002", "name": "leaf-modified-inplace", "count": 1, "fixable": True, "fixable_count": 1}]
    assert check(capsys, "--statistics", "--output-format", "sarif", tmp_path) == (
        2, "", "gradguard: --statistics prints text (full, concise) or json, not sarif\n")


def test_output_file_takes_what_stdout_would_show(tmp_path, capsys):
    path = write(tmp_path / "two.py", TWO)
    report = tmp_path / "reports" / "gradguard.txt"
    assert check(capsys, "--output-file", report, path) == (1, "", "")
    assert report.read_text() == FULL_TWO.format(path=path) + "\n" + FOUND_TWO
    assert check(capsys, "-o", report, "--output-format", "json", path) == (1, "", "")
    assert [d["code"] for d in json.loads(report.read_text())] == ["GG001", "GG002"]


def test_fail_on_error_passes_warnings_but_prints_them(tmp_path, capsys):
    path = write(tmp_path / "data.py", WARNING_ONLY)
    code, out, _ = check(capsys, "--output-format", "concise", path)
    assert code == 1 and out.startswith(f"{path}:4:1: GG004 [warning] ")
    assert check(capsys, "--output-format", "concise", "--fail-on", "error", path) == (0, out, "")
    assert check(capsys, "--fail-on", "error", write(tmp_path / "two.py", TWO))[0] == 1


def test_watch_checks_again_when_a_file_changes(tmp_path):
    """As `ruff check --watch`: a timestamped line per run, the findings after it, Ctrl-C stops it."""
    import queue
    import re
    import signal
    import threading

    path = write(tmp_path / "model.py", CLEAN)
    proc = subprocess.Popen([str(GRADGUARD), "check", "--watch", "--no-cache", "--output-format", "concise", "."],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line.rstrip("\n")) for line in proc.stdout], daemon=True).start()

    def until(last: str) -> list[str]:
        seen = [lines.get(timeout=60)]
        while not seen[-1].startswith(last):
            seen.append(lines.get(timeout=60))
        return [re.sub(r"^\[\d\d:\d\d:\d\d\] ", "[time] ", line) for line in seen]

    try:
        assert until("[") == ["[time] Starting gradguard in watch mode..."]
        assert until("[") == ["[time] Found 0 problems. Watching for file changes."]
        path.write_text(TWO)
        assert until("model.py:6:1") == [
            "[time] File change detected...", "[time] Found 2 problems. Watching for file changes.", "",
            *[line for line in FULL_TWO.format(path="model.py").splitlines() if line.startswith("model.py")]]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130, proc.stderr.read()


# --- noqa comments --------------------------------------------------------------------------------

def test_a_file_level_gradguard_noqa_exempts_the_whole_file(tmp_path, capsys):
    """As Ruff's `# ruff: noqa` / `# ruff: noqa: F401`: a comment anywhere, not a string's text."""
    def concise(text: str) -> tuple[int, list[str]]:
        code, out, _ = check(capsys, "--output-format", "concise", "--quiet", write(tmp_path / "m.py", text))
        return code, [line.split(" ")[1] for line in out.splitlines()]

    assert concise(TWO) == (1, ["GG001", "GG002"])
    assert concise("# gradguard: noqa: GG002\n" + TWO) == (1, ["GG001"])
    assert concise(TWO.replace("import torch", "import torch  # Gradguard: NoQA: gg001, GG002")) == (0, [])
    assert concise(TWO + "# gradguard: noqa\n") == (0, [])
    assert concise('s = "# gradguard: noqa"\n' + TWO) == (1, ["GG001", "GG002"])
    assert concise("# noqa\n" + TWO) == (1, ["GG001", "GG002"])  # a line's `# noqa` is the line's only


NOQAS = TWO.replace("y += 1", "y += 1  # noqa: GG001, GG002").replace(
    "(y.sum() + w.sum()).backward()", "z = y * 2  # noqa: E501, GG004  (why)\nq = z  # noqa: GG999\n"
    "(y.sum() + w.sum()).backward()  # noqa")


def test_unused_noqa_is_off_unless_selected_and_its_fix_removes_what_silences_nothing(tmp_path, capsys):
    """As Ruff's RUF100: gradguard's codes on a line without their finding; other linters' codes
    and a bare `# noqa` are theirs."""
    path = write(tmp_path / "m.py", NOQAS)
    assert check(capsys, "--output-format", "concise", "--quiet", path)[1] == (
        f"{path}:6:1: GG002 [error] [*] " + FULL_TWO.format(path=path).split("GG002 [error] [*] ")[1].split("\n")[0]
        + "\n")
    code, out, err = check(capsys, "--output-format", "concise", "--extend-select", "GG100", "--ignore", "GG002", path)
    assert (code, err) == (1, "")
    assert out == (f"{path}:4:9: GG100 [warning] [*] Unused `noqa` directive (non-enabled: `GG002`)\n"
                   f"{path}:7:12: GG100 [warning] [*] Unused `noqa` directive (unused: `GG004`)\n"
                   f"{path}:8:8: GG100 [warning] [*] Unused `noqa` directive (unknown: `GG999`)\n"
                   "Found 3 problems.\n[*] 3 fixable with the `--fix` option.\n")
    assert check(capsys, "--select", "ALL", "--fix", path)[0] == 0
    assert path.read_text() == TWO.replace("y += 1", "y += 1  # noqa: GG001").replace(
        "w.add_(1)", "with torch.no_grad():\n    w.add_(1)").replace(
        "(y.sum() + w.sum()).backward()", "z = y * 2  # noqa: E501  (why)\nq = z\n(y.sum() + w.sum()).backward()  # noqa")


def test_watch_refuses_what_it_cannot_do_again(tmp_path, capsys):
    path = write(tmp_path / "m.py", TWO)
    for flag in ("--statistics", "--add-noqa", "--show-settings"):
        assert check(capsys, "--watch", flag, path) == (2, "", (
            "gradguard: --watch checks files again as they change: it takes neither standard input, --add-noqa, "
            "--statistics nor --show-settings\n"))


def test_a_run_that_left_a_file_unanalysed_does_not_say_all_checks_passed() -> None:
    """An internal error in one file is printed on stderr; the summary says what was not analysed
    instead of claiming every check passed."""
    from gradguard.cli.report import summary

    assert summary([], 0, None, False) == ["All checks passed!"]
    assert summary([], 0, None, False, failed=2) == ["No problems found in the files analysed.",
                                                      "2 files could not be analysed (an internal error, above)."]
