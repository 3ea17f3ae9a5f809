"""`gradguard check` output formats and fixing flags, as a CI job or a user sees them.

`--format sarif` validates against the official SARIF 2.1.0 schema (tests/data/, identical to
oasis-tcs/sarif-spec's sarif-2.1/schema/sarif-schema-2.1.0.json), `--format github` writes one
workflow command per finding with GitHub's escaping, and `--diff` / `--fix` / `--unsafe-fixes`
change files (or not) with the documented exit codes.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from gradguard.__main__ import main
from gradguard.cli.output import render_github
from gradguard.findings import Finding, Position, Severity, Span
from gradguard.rules import RULES

from helpers import ROOT, run, shared_corpus, write

jsonschema = pytest.importorskip("jsonschema")
pytestmark = pytest.mark.usefixtures("isolated")

SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"

# GG001 on line 4 (`数据.mul_(2)` after a CJK string and an emoji), saved by sigmoid on line 3.
UNICODE = """\
import torch
x = torch.randn(3, requires_grad=True)
s = "😀"; 数据 = torch.sigmoid(x)
t = "数据😀"; 数据.mul_(2)
数据.sum().backward()
"""

# A GG004 (no fix) at line 4 and a GG001 (a safe fix) at line 6.
SILENT_AND_SAVED = """\
import torch
x = torch.randn(3, requires_grad=True)
y = torch.exp(x)
y.data.mul_(2)
z = torch.sigmoid(x)
z.mul_(2)
(y.sum() + z.sum()).backward()
"""

SIGMOID_MUL = """\
import torch
x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
y.mul_(2)
y.sum().backward()
"""

CLEAN = """\
import torch
x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x) * 2
y.sum().backward()
"""

# GG003 on line 5 whose only fix is unsafe: `y` and `b` share `a`'s storage and y is read afterwards,
# so rewriting `a.mul_(2)` out of place changes what `y` holds.
VIEW_WITH_ALIASES = """\
import torch
x = torch.randn(4, requires_grad=True)
y = x * 2
a, b = y.chunk(2)
a.mul_(2)
(a.sum() + y.sum()).backward()
"""


def check(capsys, *args: str | Path) -> tuple[int, str, str]:
    """`gradguard check ARGS` in-process: (exit code, stdout, stderr)."""
    code = main(["check", "--no-config", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def json_findings(capsys, *args: str | Path) -> list[dict]:
    code, out, _ = check(capsys, "--format", "json", *args)
    assert code in (0, 1)
    return json.loads(out)


# --- SARIF ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)


def sarif(capsys, *args: str | Path) -> dict:
    code, out, err = check(capsys, "--format", "sarif", *args)
    assert code in (0, 1), err
    return json.loads(out)


def assert_valid(validator, log: dict) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:10])


@pytest.mark.parametrize("what", ["unicode", "clean", "corpus"])
def test_sarif_validates_against_the_schema(capsys, tmp_path, sarif_validator, what):
    if what == "corpus":
        target = shared_corpus() / "cases"
    else:
        target = write(tmp_path / f"{what}.py", UNICODE if what == "unicode" else CLEAN)
    log = sarif(capsys, target)
    assert_valid(sarif_validator, log)
    assert log["version"] == "2.1.0"
    results = log["runs"][0]["results"]
    assert (len(results) == 0) == (what == "clean")


def test_sarif_run_columns_and_rules(capsys, tmp_path):
    log = sarif(capsys, write(tmp_path / "uni.py", UNICODE))
    (run_,) = log["runs"]
    assert run_["columnKind"] == "unicodeCodePoints"
    driver = run_["tool"]["driver"]
    assert driver["name"] == "gradguard"
    assert [r["id"] for r in driver["rules"]] == [rule.code for rule in RULES]
    for descriptor, rule in zip(driver["rules"], RULES):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["help"]["text"] == rule.documentation
        assert "## Why is this bad?" in descriptor["help"]["markdown"]
        assert descriptor["helpUri"] == rule.url


def test_sarif_result_positions_count_code_points(capsys, tmp_path):
    path = write(tmp_path / "uni.py", UNICODE)
    lines = UNICODE.splitlines()
    (result,) = sarif(capsys, path)["runs"][0]["results"]
    assert result["ruleId"] == "GG001"
    assert RULES[result["ruleIndex"]].code == "GG001"
    assert result["level"] == "error"
    assert "`数据`" in result["message"]["text"]

    location = result["locations"][0]["physicalLocation"]
    assert Path(unquote(urlparse(location["artifactLocation"]["uri"]).path)) == path.resolve()
    start = lines[3].index("数据.mul_(2)")  # 11 code points; 13 UTF-16 units; 19 UTF-8 bytes
    assert location["region"] == {"startLine": 4, "startColumn": start + 1,
                                  "endLine": 4, "endColumn": start + len("数据.mul_(2)") + 1}

    related, raises = result["relatedLocations"]
    assert (raises["id"], raises["physicalLocation"]["region"]["startLine"]) == (1, 5)  # the backward() that raises
    saved = lines[2].index("torch.sigmoid(x)")
    assert related["physicalLocation"]["region"] == {"startLine": 3, "startColumn": saved + 1,
                                                     "endLine": 3, "endColumn": saved + len("torch.sigmoid(x)") + 1}
    assert "sigmoid" in related["message"]["text"]


def test_sarif_levels_follow_severity(capsys, tmp_path):
    results = sarif(capsys, write(tmp_path / "mixed.py", SILENT_AND_SAVED))["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("GG004", "warning"), ("GG001", "error")]


# --- GitHub Actions annotations ------------------------------------------------------------------

ANNOTATION = re.compile(r"^::(error|warning|notice) (?P<properties>[^:]*)::(?P<message>.*)$")


def unescape(text: str) -> str:
    for escaped, plain in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, plain)
    return text


def annotations(output: str) -> list[tuple[str, dict[str, str], str]]:
    parsed = []
    for line in output.splitlines():
        match = ANNOTATION.match(line)
        assert match, f"not a workflow command: {line!r}"
        properties = dict(item.split("=", 1) for item in match["properties"].split(","))
        parsed.append((match.group(1), {k: unescape(v) for k, v in properties.items()}, unescape(match["message"])))
    return parsed


def test_github_one_annotation_per_finding(capsys, tmp_path):
    path = write(tmp_path / "mixed.py", SILENT_AND_SAVED)
    diagnostics = json_findings(capsys, path)
    code, out, err = check(capsys, "--format", "github", path)
    assert code == 1 and err == ""
    got = annotations(out)
    assert len(got) == len(diagnostics) == 2
    for (kind, properties, message), diagnostic in zip(got, diagnostics):
        assert kind == {"error": "error", "warning": "warning", "info": "notice"}[diagnostic["severity"]]
        assert properties["file"] == str(path)
        assert (int(properties["line"]), int(properties["col"])) == \
            (diagnostic["location"]["row"], diagnostic["location"]["column"])
        assert (int(properties["endLine"]), int(properties["endColumn"])) == \
            (diagnostic["end_location"]["row"], diagnostic["end_location"]["column"])
        assert properties["title"] == diagnostic["code"]
        assert message == f"{diagnostic['code']} {diagnostic['message']}"
    assert out.splitlines()[1].startswith(f"::error file={path},line=6,col=1,")
    assert "::GG001 `z` is the output of `torch.sigmoid`" in out.splitlines()[1]


def test_github_escapes_properties_and_message(capsys, tmp_path):
    path = write(tmp_path / "we%ird,na:me.py", SIGMOID_MUL)
    code, out, _ = check(capsys, "--format", "github", path)
    assert code == 1
    assert f"file={str(path).replace('%', '%25').replace(':', '%3A').replace(',', '%2C')},line=4," in out
    ((_, properties, _),) = annotations(out)
    assert properties["file"] == str(path)

    odd = Finding("GG001", Severity.WARNING, "100% sure:\r\nline two, with a comma", "a,b:c%d\ne.py",
                  Span(Position(2, 0), Position(2, 3)))
    line = render_github([odd])
    assert "\n" not in line and "\r" not in line
    assert line == ("::warning file=a%2Cb%3Ac%25d%0Ae.py,line=2,col=1,endLine=2,endColumn=4,title=GG001"
                    "::GG001 100%25 sure:%0D%0Aline two, with a comma")
    ((kind, properties, message),) = annotations(line)
    assert (kind, properties["file"], message) == ("warning", "a,b:c%d\ne.py", "GG001 100% sure:\r\nline two, with a comma")


# --- --diff, --fix, --unsafe-fixes ---------------------------------------------------------------

def test_diff_prints_the_fix_and_changes_no_file(tmp_path):
    before = write(tmp_path / "before.py", SILENT_AND_SAVED)
    to_fix = write(tmp_path / "fixed.py", SILENT_AND_SAVED)
    assert run("check", "--fix", "fixed.py", cwd=tmp_path).returncode == 1
    fixed_text = to_fix.read_text(encoding="utf-8")
    assert fixed_text != SILENT_AND_SAVED

    proc = run("check", "--diff", "before.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert before.read_text(encoding="utf-8") == SILENT_AND_SAVED
    assert proc.stdout.startswith("--- before.py\n+++ before.py\n@@ ")
    assert proc.stdout == "".join(difflib.unified_diff(SILENT_AND_SAVED.splitlines(keepends=True),
                                                       fixed_text.splitlines(keepends=True),
                                                       "before.py", "before.py")) + "Would fix 1 problem.\n"
    assert proc.stderr == ""


def test_diff_exits_0_when_there_is_nothing_to_fix(tmp_path):
    write(tmp_path / "clean.py", CLEAN)
    proc = run("check", "--diff", "clean.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "Would fix 0 problems.\n", "")


def test_fix_writes_the_file_and_exits_0_when_everything_is_fixed(tmp_path):
    path = write(tmp_path / "bad.py", SIGMOID_MUL)
    proc = run("check", "--fix", "bad.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "Found 1 problem (1 fixed, 0 remaining).\n", "")
    assert path.read_text(encoding="utf-8") != SIGMOID_MUL
    assert run("check", "bad.py", cwd=tmp_path).returncode == 0


def test_fix_reports_what_remains_and_exits_1(tmp_path):
    path = write(tmp_path / "mixed.py", SILENT_AND_SAVED)
    proc = run("check", "--fix", "mixed.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.startswith("mixed.py:4:1: GG004 [warning] ")
    assert "GG001" not in proc.stdout
    assert proc.stdout.endswith("\n\nFound 2 problems (1 fixed, 1 remaining).\n") and proc.stderr == ""
    fixed = path.read_text(encoding="utf-8")
    assert "y.data.mul_(2)" in fixed and fixed != SILENT_AND_SAVED


def test_fix_with_json_reports_only_what_remains(capsys, tmp_path):
    path = write(tmp_path / "mixed.py", SILENT_AND_SAVED)
    remaining = json_findings(capsys, "--fix", path)
    assert [(d["code"], d["location"]["row"], d["fix"]) for d in remaining] == [("GG004", 4, None)]


def test_unsafe_fixes_are_applied_only_with_the_flag(capsys, tmp_path):
    path = write(tmp_path / "views.py", VIEW_WITH_ALIASES)
    (finding,) = json_findings(capsys, path)
    assert finding["code"] == "GG003"
    assert finding["fix"] is not None and finding["fix"]["applicability"] == "unsafe", finding["fix"]

    code, out, err = check(capsys, "--fix", path)
    assert code == 1 and path.read_text(encoding="utf-8") == VIEW_WITH_ALIASES
    assert "views.py:5:1: GG003" in out and err == ""
    assert out.endswith("\n\nFound 1 problem (0 fixed, 1 remaining).\n"
                        "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n")

    code, out, _ = check(capsys, "--diff", "--unsafe-fixes", path)
    assert code == 1 and "-a.mul_(2)\n" in out
    assert path.read_text(encoding="utf-8") == VIEW_WITH_ALIASES

    code, out, err = check(capsys, "--fix", "--unsafe-fixes", path)
    assert (code, out, err) == (0, "Found 1 problem (1 fixed, 0 remaining).\n", "")
    assert "a.mul_(2)" not in path.read_text(encoding="utf-8")


# --- pre-commit hooks ----------------------------------------------------------------------------

def test_pre_commit_hooks_run_the_console_script(tmp_path):
    yaml = pytest.importorskip("yaml")
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [hook["id"] for hook in hooks] == ["gradguard", "gradguard-fix"]
    entries = {}
    for hook in hooks:
        assert hook["language"] == "python" and hook["types_or"] == ["python", "pyi", "jupyter"], hook
        assert hook["name"] and hook["description"]
        program, *arguments = hook["entry"].split()
        assert program in scripts and scripts[program] == "gradguard.__main__:main", hook["entry"]
        entries[hook["id"]] = arguments
    assert entries == {"gradguard": ["check"], "gradguard-fix": ["check", "--fix"]}

    # As pre-commit runs them: the entry, then the staged files' names.
    write(tmp_path / "bad.py", SILENT_AND_SAVED)
    proc = run(*entries["gradguard"], "bad.py", cwd=tmp_path)
    assert proc.returncode == 1 and "bad.py:6:1: GG001" in proc.stdout
    proc = run(*entries["gradguard-fix"], "bad.py", cwd=tmp_path)
    assert proc.returncode == 1 and "GG001" not in proc.stdout and "bad.py:4:1: GG004" in proc.stdout
    assert (tmp_path / "bad.py").read_text(encoding="utf-8") != SILENT_AND_SAVED
