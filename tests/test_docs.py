"""The rule pages in docs/rules/ are generated from the rule docstrings, and those docstrings
tell the truth: each "## Example" is found by its rule at the marked line, and the code
examples behave in torch the way the text says."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from gradguard.__main__ import main
from gradguard.rules import RULES, RULES_BY_CODE

from helpers import GRADGUARD, ROOT, import_file

RULES_DIR = ROOT / "docs" / "rules"
SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Fix safety")

#: Names the docstring examples use without defining them: an input that requires grad and a layer.
PRELUDE = "import torch\nfrom torch import nn\n\nx = torch.randn(4, 8, requires_grad=True)\nproj = nn.Linear(8, 8)\n"
#: Rules whose example runs to the end without an error: the gradients are silently wrong.
SILENT = {"GG004", "GG005"}
CHECKED = ("GG001", "GG002", "GG003", "GG004", "GG005")


def _generator():
    return import_file(ROOT / "scripts" / "generate_docs.py", "generate_docs")


def _example_blocks(code: str) -> tuple[str, list[str]]:
    """The "## Example" section's first code block (the problem) and the others ("Use instead")."""
    section = RULES_BY_CODE[code].documentation.split("## Example", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert blocks, f"{code}: the Example section has no ```python block"
    return blocks[0], blocks[1:]


def _check(tmp_path: Path, source: str, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    path = tmp_path / "snippet.py"
    path.write_text(source, encoding="utf-8")
    capsys.readouterr()
    main(["check", "--no-config", "--format", "json", str(path)])
    return json.loads(capsys.readouterr().out)


def _run(source: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "<docstring example>", "exec"), {})


def test_committed_pages_are_generated() -> None:
    generated = _generator().pages()
    committed = {path.name for path in RULES_DIR.glob("*.md")}
    assert committed == set(generated), f"docs/rules/ has {sorted(committed)}, expected {sorted(generated)}: run `make docs`"
    for name, text in generated.items():
        assert (RULES_DIR / name).read_text(encoding="utf-8") == text, f"docs/rules/{name} is stale: run `make docs`"


def test_generation_is_deterministic() -> None:
    assert _generator().pages() == _generator().pages()


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_docstring_has_the_four_sections(rule) -> None:
    headings = [line.rstrip() for line in rule.documentation.splitlines() if line.startswith("## ")]
    assert [h for h in headings if h in SECTIONS] == list(SECTIONS), f"{rule.code}: sections are {headings}"
    assert rule.summary and rule.summary.endswith("."), f"{rule.code}: the first line is the summary sentence"


@pytest.mark.parametrize("code", CHECKED)
def test_example_is_found_at_the_marked_line(code: str, tmp_path: Path, capsys) -> None:
    example, _ = _example_blocks(code)
    marked = [n for n, line in enumerate(example.splitlines(), 1) if re.search(rf"#\s*{code}\b", line)]
    assert marked, f"{code}: the example marks no line with `# {code}`"
    offset = PRELUDE.count("\n")
    findings = _check(tmp_path, PRELUDE + example, capsys)
    assert sorted((f["code"], f["location"]["row"]) for f in findings) == [(code, offset + n) for n in marked]


@pytest.mark.parametrize("code", CHECKED)
def test_use_instead_is_clean(code: str, tmp_path: Path, capsys) -> None:
    for block in _example_blocks(code)[1]:
        assert _check(tmp_path, PRELUDE + block, capsys) == [], f"{code}: the 'Use instead' code gets findings"


def test_unparsable_example_gets_gg000(tmp_path: Path, capsys) -> None:
    example, _ = _example_blocks("GG000")
    assert [f["code"] for f in _check(tmp_path, PRELUDE + example, capsys)] == ["GG000"]


@pytest.mark.parametrize("code", CHECKED)
def test_examples_behave_as_documented_in_torch(code: str) -> None:
    pytest.importorskip("torch")
    example, instead = _example_blocks(code)
    if code in SILENT:
        _run(PRELUDE + example)
    else:
        with pytest.raises(RuntimeError):
            _run(PRELUDE + example)
    for block in instead:
        _run(PRELUDE + block)


def test_examples_show_every_rule(capsys) -> None:
    """`make demo` runs `gradguard check examples/`: every rule shows, with its related locations,
    and the clean training script gets nothing."""
    main(["check", "--no-config", "--format", "json", str(ROOT / "examples")])
    findings = json.loads(capsys.readouterr().out)
    by_file: dict[str, set[str]] = {}
    for finding in findings:
        by_file.setdefault(Path(finding["filename"]).name, set()).add(finding["code"])
        assert finding["related"], f"{finding['code']} in {finding['filename']} has no related location"
    assert set().union(*by_file.values()) >= set(CHECKED)
    assert "clean_training.py" not in by_file
    examples = {path.name for path in (ROOT / "examples").glob("*.py")}
    assert examples - {"clean_training.py"} == set(by_file), "every other example trips a rule"


def test_the_readme_links_are_absolute_and_each_names_a_file_of_the_repository():
    """The README is the package's long description: PyPI cannot follow a relative link."""
    from gradguard import REPOSITORY

    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)]+)\)", text)
    assert links and all(link.startswith(("https://", "#")) for link in links), links
    for link in links:
        for kind in ("blob", "tree"):
            prefix = f"{REPOSITORY}/{kind}/main/"
            if link.startswith(prefix):
                assert (ROOT / link.removeprefix(prefix).split("#")[0]).exists(), link


VERIFY_DOC = ROOT / "docs" / "verify.md"


def _verify_doc_examples() -> list[str]:
    """The `$ gradguard verify ...` lines of docs/verify.md's code blocks, comments dropped."""
    blocks = re.findall(r"```\n(.*?)```", VERIFY_DOC.read_text(), re.DOTALL)
    return [line[2:].split("  #")[0].strip() for block in blocks for line in block.splitlines()
            if line.startswith("$ gradguard verify")]


def _doc_lines(prefix: str) -> list[str]:
    return [line.strip() for line in VERIFY_DOC.read_text().splitlines() if line.strip().startswith(prefix)]


@pytest.mark.parametrize("example", _verify_doc_examples())
def test_the_verify_page_examples_run_as_written(example: str) -> None:
    """Each runs from the repository's root, as the page says, and finds its problem (exit 1)."""
    run = subprocess.run([str(GRADGUARD), *shlex.split(example)[1:]], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 1, run.stderr
    assert "could not verify" not in run.stderr
    if "--format json" in example:
        assert {item["origin"] for item in json.loads(run.stdout)} == {"both"}


def test_the_verify_page_says_what_verify_prints_when_it_cannot_run(tmp_path: Path) -> None:
    [inputs] = _doc_lines("gradguard: could not verify examples/masked_block.py")
    run = subprocess.run([str(GRADGUARD), "verify", "examples/masked_block.py", "--target", "MaskedBlock"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and inputs in run.stderr.splitlines(), run.stderr
    [no_torch] = _doc_lines("gradguard: could not verify train.py")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    (tmp_path / "train.py").write_text("import torch\n")
    bare = tmp_path / "bare" / "bin"
    run = subprocess.run([str(GRADGUARD), "verify", "--python", str(bare / "python3"), "train.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    said = no_torch.replace("/usr/bin/python3", str(bare / "python3")).replace("python3 on PATH", "--python")
    assert said in run.stderr.splitlines(), run.stderr
